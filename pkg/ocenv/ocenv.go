// Package ocenv reads what OpenCode 1.x reads outside its data directory
// to run a session: the user's config files (which providers and models
// exist, the default model), the models.dev catalogue OpenCode caches, and
// the project a directory resolves to. sessfix's rules use it to tell
// whether a session's stored model still exists and whether its project
// row is the one OpenCode lists it under.
//
// Everything here only reads files; nothing runs OpenCode, git or the
// network. What cannot be known that way is reported as unknown, never
// guessed: a provider's credentials (OpenCode drops providers without
// them; sessfix does not look for credentials), a remote organisation
// config, the catalogue compiled into the OpenCode binary when no cached
// copy exists, and a git repository's id before OpenCode has cached it.
package ocenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tailscale/hujson"
)

// Env is the environment OpenCode runs in: its variables and home
// directory. The zero Env reads nothing.
type Env struct {
	// Getenv reads an environment variable ("" when unset).
	Getenv func(string) string
	// Home is the user's home directory.
	Home string
}

// FromProcess is the environment of the running process.
func FromProcess() Env {
	home, _ := os.UserHomeDir()
	return Env{Getenv: os.Getenv, Home: home}
}

func (e Env) get(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// xdg returns an XDG base directory: the variable when set, else the
// default under the home directory.
func (e Env) xdg(name, def string) string {
	if v := e.get(name); v != "" {
		return v
	}
	if e.Home == "" {
		return ""
	}
	return filepath.Join(e.Home, def)
}

// ConfigDir is OpenCode's global config directory
// ($XDG_CONFIG_HOME/opencode).
func (e Env) ConfigDir() string {
	d := e.xdg("XDG_CONFIG_HOME", ".config")
	if d == "" {
		return ""
	}
	return filepath.Join(d, "opencode")
}

// CatalogPath is the models.dev catalogue OpenCode reads before its
// compiled-in copy: $OPENCODE_MODELS_PATH, else the copy it caches in
// $XDG_CACHE_HOME/opencode/models.json.
func (e Env) CatalogPath() string {
	if p := e.get("OPENCODE_MODELS_PATH"); p != "" {
		return p
	}
	d := e.xdg("XDG_CACHE_HOME", ".cache")
	if d == "" {
		return ""
	}
	return filepath.Join(d, "opencode", "models.json")
}

// Config is the part of OpenCode's merged config sessfix reads.
type Config struct {
	// Model is the default model, "provider/model".
	Model string
	// Providers are the providers the config defines or changes, by id.
	Providers map[string]*Provider
	// Enabled, when not nil, lists the only providers OpenCode loads
	// (enabled_providers); Disabled lists providers it never loads.
	Enabled, Disabled []string
	// Sources are the files (and "OPENCODE_CONFIG_CONTENT") merged, in
	// order.
	Sources []string
}

// Provider is one provider entry of the config.
type Provider struct {
	// Models are the model ids the config defines for the provider.
	Models []string
	// Whitelist, when not nil, lists the only models OpenCode offers;
	// Blacklist lists models it hides.
	Whitelist, Blacklist []string
	// Limits are the token limits the config gives its models
	// (`models.<id>.limit`), by model id; a model without one is absent.
	Limits map[string]Limit
	// NPM is the AI SDK package the config names for the provider
	// (`npm`); ModelNPM the one it names for a model
	// (`models.<id>.provider.npm`), by model id. "" and absent when unset.
	NPM      string
	ModelNPM map[string]string
}

// Limit is a model's token limits as OpenCode reads them
// (`limit.context`, `limit.input`, `limit.output`); 0 is unset.
type Limit struct {
	Context, Input, Output int
}

// limitOf reads a `limit` object (zero when v is not one).
func limitOf(v any) Limit {
	m, _ := v.(map[string]any)
	n := func(k string) int {
		f, _ := m[k].(float64)
		if f < 0 {
			return 0
		}
		return int(f)
	}
	return Limit{Context: n("context"), Input: n("input"), Output: n("output")}
}

// ConfigError is a config file OpenCode would refuse too.
type ConfigError struct {
	Path string
	Err  error
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("opencode config %s: %v", e.Path, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig merges the config files OpenCode 1.x reads for a session run
// in directory (empty: global files only), in its order, later ones
// overriding earlier ones key by key: the global config directory's
// config.json, opencode.json and opencode.jsonc; the file
// $OPENCODE_CONFIG names; opencode.jsonc and opencode.json from the
// worktree (the git repository root, or / outside git) down to directory,
// then the same files in .opencode directories there (both skipped with
// $OPENCODE_DISABLE_PROJECT_CONFIG); and $OPENCODE_CONFIG_CONTENT. Files
// are JSON with comments and trailing commas (JSONC). A file that cannot
// be parsed is an error, as it is for OpenCode.
func (e Env) LoadConfig(directory string) (*Config, error) {
	merged := map[string]any{}
	c := &Config{}
	add := func(path string, data []byte) error {
		v, err := parseJSONC(data)
		if err != nil {
			return &ConfigError{Path: path, Err: err}
		}
		merged = mergeDeep(merged, v)
		c.Sources = append(c.Sources, path)
		return nil
	}
	file := func(path string) error {
		data, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) || isDir(path) {
				return nil
			}
			return &ConfigError{Path: path, Err: err}
		}
		return add(path, data)
	}
	if d := e.ConfigDir(); d != "" {
		for _, name := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
			if err := file(filepath.Join(d, name)); err != nil {
				return nil, err
			}
		}
	}
	if p := e.get("OPENCODE_CONFIG"); p != "" {
		if err := file(p); err != nil {
			return nil, err
		}
	}
	if directory != "" && !truthy(e.get("OPENCODE_DISABLE_PROJECT_CONFIG")) {
		// As OpenCode does: each name found upwards, merged from the
		// outermost directory in, the .opencode directories after.
		dirs := projectDirs(directory)
		for _, sub := range []string{"", ".opencode"} {
			for _, name := range []string{"opencode.jsonc", "opencode.json"} {
				for _, d := range dirs {
					if err := file(filepath.Join(d, sub, name)); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	if s := e.get("OPENCODE_CONFIG_CONTENT"); s != "" {
		if err := add("OPENCODE_CONFIG_CONTENT", []byte(s)); err != nil {
			return nil, err
		}
	}
	c.read(merged)
	return c, nil
}

func truthy(s string) bool { return s == "1" || strings.EqualFold(s, "true") }

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// projectDirs are the directories from the worktree holding directory (the
// closest one with a .git entry, else the filesystem root) down to
// directory itself, outermost first.
func projectDirs(directory string) []string {
	directory = filepath.Clean(directory)
	var up []string
	for d := directory; ; d = filepath.Dir(d) {
		up = append(up, d)
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(up)
	return up
}

func parseJSONC(data []byte) (map[string]any, error) {
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(std, &v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return v, nil
}

// mergeDeep merges b over a: objects key by key, anything else replaced.
func mergeDeep(a, b map[string]any) map[string]any {
	for k, bv := range b {
		am, aok := a[k].(map[string]any)
		bm, bok := bv.(map[string]any)
		if aok && bok {
			a[k] = mergeDeep(am, bm)
			continue
		}
		a[k] = bv
	}
	return a
}

func (c *Config) read(m map[string]any) {
	c.Model, _ = m["model"].(string)
	c.Enabled = stringsOf(m["enabled_providers"])
	c.Disabled = stringsOf(m["disabled_providers"])
	c.Providers = map[string]*Provider{}
	ps, _ := m["provider"].(map[string]any)
	for id, v := range ps {
		pm, _ := v.(map[string]any)
		p := &Provider{Whitelist: stringsOf(pm["whitelist"]), Blacklist: stringsOf(pm["blacklist"])}
		p.NPM, _ = pm["npm"].(string)
		models, _ := pm["models"].(map[string]any)
		for mid, mv := range models {
			p.Models = append(p.Models, mid)
			mm, _ := mv.(map[string]any)
			if npm := npmOf(mm["provider"]); npm != "" {
				if p.ModelNPM == nil {
					p.ModelNPM = map[string]string{}
				}
				p.ModelNPM[mid] = npm
			}
			if l := limitOf(mm["limit"]); l != (Limit{}) {
				if p.Limits == nil {
					p.Limits = map[string]Limit{}
				}
				p.Limits[mid] = l
			}
		}
		slices.Sort(p.Models)
		c.Providers[id] = p
	}
}

// npmOf reads the `npm` of a model's `provider` object ("" when v is not
// one or has none).
func npmOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["npm"].(string)
	return s
}

// stringsOf is a JSON array of strings, or nil when v is not an array.
func stringsOf(v any) []string {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := []string{}
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
