package ocenv

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// Catalog is the models.dev catalogue: provider id → model ids.
type Catalog struct {
	Path      string
	Providers map[string]map[string]bool
	// Limits are the models' token limits, provider id → model id.
	Limits map[string]map[string]Limit
	// NPM is each provider's AI SDK package (`npm`), by provider id;
	// ModelNPM a model's own (`provider.npm`), provider id → model id.
	NPM      map[string]string
	ModelNPM map[string]map[string]string
}

// LoadCatalog reads the catalogue OpenCode reads (CatalogPath). It
// returns nil, and no error, when there is no such file: OpenCode then
// uses the copy compiled into its binary, which sessfix cannot read.
func (e Env) LoadCatalog() (*Catalog, error) {
	path := e.CatalogPath()
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("models catalogue %s: %w", path, err)
	}
	var raw map[string]struct {
		NPM    string `json:"npm"`
		Models map[string]struct {
			Limit    map[string]any `json:"limit"`
			Provider struct {
				NPM string `json:"npm"`
			} `json:"provider"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("models catalogue %s: %w", path, err)
	}
	c := &Catalog{Path: path, Providers: map[string]map[string]bool{}, Limits: map[string]map[string]Limit{},
		NPM: map[string]string{}, ModelNPM: map[string]map[string]string{}}
	for id, p := range raw {
		ms := map[string]bool{}
		ls := map[string]Limit{}
		for m, mv := range p.Models {
			ms[m] = true
			if l := limitOf(mv.Limit); l != (Limit{}) {
				ls[m] = l
			}
			if mv.Provider.NPM != "" {
				if c.ModelNPM[id] == nil {
					c.ModelNPM[id] = map[string]string{}
				}
				c.ModelNPM[id][m] = mv.Provider.NPM
			}
		}
		c.Providers[id] = ms
		c.Limits[id] = ls
		if p.NPM != "" {
			c.NPM[id] = p.NPM
		}
	}
	return c, nil
}

// Models is what OpenCode knows about providers and models: the merged
// config and, when OpenCode caches one, the catalogue.
type Models struct {
	Config  *Config
	Catalog *Catalog // nil: only the compiled-in copy exists
}

// Verdict says whether OpenCode has a model.
type Verdict uint8

// Verdicts.
const (
	Unknown Verdict = iota // cannot be told from the files sessfix reads
	Known                  // the config or the catalogue has it
	Missing                // OpenCode has no such provider or model: ProviderModelNotFoundError
)

// Lookup tells whether OpenCode resolves providerID/modelID, and why not.
// Providers without credentials, which OpenCode also drops, are not
// detected.
func (ms *Models) Lookup(providerID, modelID string) (Verdict, string) {
	c := ms.Config
	if c == nil {
		c = &Config{}
	}
	if slices.Contains(c.Disabled, providerID) {
		return Missing, "disabled_providers lists provider " + providerID
	}
	if c.Enabled != nil && !slices.Contains(c.Enabled, providerID) {
		return Missing, "enabled_providers does not list provider " + providerID
	}
	cp := c.Providers[providerID]
	var catModels map[string]bool
	if ms.Catalog != nil {
		catModels = ms.Catalog.Providers[providerID]
	}
	if cp != nil {
		if slices.Contains(cp.Blacklist, modelID) {
			return Missing, "provider " + providerID + "'s blacklist lists model " + modelID
		}
		if cp.Whitelist != nil && !slices.Contains(cp.Whitelist, modelID) {
			return Missing, "provider " + providerID + "'s whitelist does not list model " + modelID
		}
		if slices.Contains(cp.Models, modelID) {
			return Known, ""
		}
	}
	if catModels[modelID] {
		return Known, ""
	}
	switch {
	case ms.Catalog == nil:
		return Unknown, ""
	case cp == nil && catModels == nil:
		return Missing, "neither the config nor the models catalogue has provider " + providerID
	}
	return Missing, "provider " + providerID + " has no model " + modelID
}

// OpenAICompatible is the AI SDK package OpenCode loads for a model that
// names none: the OpenAI-compatible Chat Completions one.
const OpenAICompatible = "@ai-sdk/openai-compatible"

// Package is the AI SDK package (an npm name) OpenCode 1.18.33 loads for
// providerID/modelID, as its provider list sets a model's api.npm: for a
// model the config defines, the model's `provider.npm`, the provider's
// `npm`, then the catalogue's (the model's own, then its provider's), then
// OpenAICompatible; for a model only the catalogue has, the catalogue's,
// then OpenAICompatible. "" when neither knows the model: then the
// compiled-in catalogue decides, which sessfix cannot read.
func (ms *Models) Package(providerID, modelID string) string {
	var catModel, catProvider string
	catHas := false
	if c := ms.Catalog; c != nil {
		catModel, catProvider = c.ModelNPM[providerID][modelID], c.NPM[providerID]
		catHas = c.Providers[providerID][modelID]
	}
	cfgHas := false
	if ms.Config != nil {
		if p := ms.Config.Providers[providerID]; p != nil {
			cfgHas = slices.Contains(p.Models, modelID)
			if cfgHas {
				for _, npm := range []string{p.ModelNPM[modelID], p.NPM} {
					if npm != "" {
						return npm
					}
				}
			}
		}
	}
	if !cfgHas && !catHas {
		return ""
	}
	for _, npm := range []string{catModel, catProvider} {
		if npm != "" {
			return npm
		}
	}
	return OpenAICompatible
}

// Default is the model a session with an unknown model can be given
// without choosing for the user: the config's default model when OpenCode
// has it, else the one model the config defines when there is exactly
// one. ok is false when no such model exists.
func (ms *Models) Default() (providerID, modelID string, ok bool) {
	if ms.Config == nil {
		return "", "", false
	}
	if p, m, found := strings.Cut(ms.Config.Model, "/"); found {
		if v, _ := ms.Lookup(p, m); v == Known {
			return p, m, true
		}
		return "", "", false
	}
	var only [2]string
	n := 0
	for pid, p := range ms.Config.Providers {
		for _, m := range p.Models {
			if v, _ := ms.Lookup(pid, m); v == Known {
				only, n = [2]string{pid, m}, n+1
			}
		}
	}
	if n != 1 {
		return "", "", false
	}
	return only[0], only[1], true
}

// Limit returns the token limits OpenCode gives providerID/modelID and
// where they come from: the config's `provider.<id>.models.<id>.limit`
// (merged over the catalogue's, key by key, as OpenCode merges a model
// the config changes), else the catalogue's. ok is false when neither
// gives a context limit.
func (ms *Models) Limit(providerID, modelID string) (l Limit, source string, ok bool) {
	if ms.Catalog != nil {
		if cl, found := ms.Catalog.Limits[providerID][modelID]; found {
			l, source = cl, "the models catalogue "+ms.Catalog.Path
		}
	}
	if ms.Config != nil {
		if p := ms.Config.Providers[providerID]; p != nil {
			if cl, found := p.Limits[modelID]; found {
				if cl.Context != 0 {
					l.Context = cl.Context
				}
				if cl.Input != 0 {
					l.Input = cl.Input
				}
				if cl.Output != 0 {
					l.Output = cl.Output
				}
				source = "your opencode config"
			}
		}
	}
	return l, source, l.Context > 0
}

// Resolver answers, for the sessions of a scan, what OpenCode would read in
// each session's directory, reading each file once. It is safe for
// concurrent use.
type Resolver struct {
	env Env

	mu      sync.Mutex
	catDone bool
	catalog *Catalog
	catErr  error
	configs map[string]configResult
	// projects are the directories resolved so far (Project).
	projects map[string]Resolution
}

type configResult struct {
	c   *Config
	err error
}

// NewResolver returns a Resolver over the environment.
func NewResolver(e Env) *Resolver {
	return &Resolver{env: e, configs: map[string]configResult{}, projects: map[string]Resolution{}}
}

// Project is the project OpenCode resolves directory to (ResolveProject),
// resolved once per directory: the sessions of a scan share a few
// directories.
func (r *Resolver) Project(directory string) Resolution {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.projects[directory]
	if !ok {
		res = ResolveProject(directory)
		r.projects[directory] = res
	}
	return res
}

// Models is what OpenCode knows about providers and models for a session
// run in directory.
func (r *Resolver) Models(directory string) (*Models, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.catDone {
		r.catalog, r.catErr = r.env.LoadCatalog()
		r.catDone = true
	}
	if r.catErr != nil {
		return nil, r.catErr
	}
	res, ok := r.configs[directory]
	if !ok {
		res.c, res.err = r.env.LoadConfig(directory)
		r.configs[directory] = res
	}
	if res.err != nil {
		return nil, res.err
	}
	return &Models{Config: res.c, Catalog: r.catalog}, nil
}
