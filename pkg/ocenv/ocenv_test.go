package ocenv

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func envOf(home string, vars map[string]string) Env {
	return Env{Home: home, Getenv: func(k string) string { return vars[k] }}
}

// The config files merge in OpenCode's order, later ones key by key over
// earlier ones; JSONC comments and trailing commas are read.
func TestLoadConfigMergesInOpenCodesOrder(t *testing.T) {
	home := t.TempDir()
	repo := filepath.Join(home, "repo")
	dir := filepath.Join(repo, "sub")
	write(t, filepath.Join(home, ".config", "opencode", "opencode.jsonc"), `{
		// global
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"local": {"models": {"llama": {}, "qwen": {},}}},
	}`)
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, "opencode.json"), `{"provider": {"local": {"blacklist": ["qwen"]}}}`)
	write(t, filepath.Join(dir, ".opencode", "opencode.json"), `{"model": "local/llama"}`)
	write(t, filepath.Join(home, "outside", "opencode.json"), `{"model": "never/read"}`)

	c, err := envOf(home, nil).LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "local/llama" {
		t.Errorf("model %q, want the .opencode file's", c.Model)
	}
	p := c.Providers["local"]
	if p == nil || !slices.Equal(p.Models, []string{"llama", "qwen"}) || !slices.Equal(p.Blacklist, []string{"qwen"}) {
		t.Errorf("provider local %+v: the global models and the project's blacklist, merged", p)
	}
	if len(c.Sources) != 3 {
		t.Errorf("sources %v, want the global, the repository's and the .opencode file", c.Sources)
	}

	c, err = envOf(home, map[string]string{"OPENCODE_DISABLE_PROJECT_CONFIG": "1", "OPENCODE_CONFIG_CONTENT": `{"disabled_providers": ["local"]}`}).LoadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "anthropic/claude-sonnet-4-5" || !slices.Equal(c.Disabled, []string{"local"}) {
		t.Errorf("without project config: model %q, disabled %v", c.Model, c.Disabled)
	}

	write(t, filepath.Join(repo, "opencode.json"), `{"model": `)
	_, err = envOf(home, nil).LoadConfig(dir)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Path != filepath.Join(repo, "opencode.json") {
		t.Errorf("a broken config file: %v, want a ConfigError naming it", err)
	}
}

func TestLookup(t *testing.T) {
	cat := &Catalog{Providers: map[string]map[string]bool{
		"anthropic": {"claude-sonnet-4-5": true, "claude-haiku-4-5": true},
		"openai":    {"gpt-5": true},
	}}
	cfg := &Config{
		Disabled: []string{"openai"},
		Providers: map[string]*Provider{
			"anthropic": {Blacklist: []string{"claude-haiku-4-5"}},
			"local":     {Models: []string{"llama"}},
		},
	}
	ms := &Models{Config: cfg, Catalog: cat}
	for _, c := range []struct {
		provider, model string
		want            Verdict
		why             string
	}{
		{"anthropic", "claude-sonnet-4-5", Known, ""},
		{"local", "llama", Known, ""},
		{"anthropic", "claude-retired-1", Missing, "provider anthropic has no model claude-retired-1"},
		{"anthropic", "claude-haiku-4-5", Missing, "blacklist lists model claude-haiku-4-5"},
		{"openai", "gpt-5", Missing, "disabled_providers lists provider openai"},
		{"retired", "x", Missing, "neither the config nor the models catalogue has provider retired"},
	} {
		v, why := ms.Lookup(c.provider, c.model)
		if v != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s/%s: %v %q, want %v %q", c.provider, c.model, v, why, c.want, c.why)
		}
	}
	// Without a cached catalogue only the config can say no.
	noCat := &Models{Config: cfg}
	if v, _ := noCat.Lookup("anthropic", "claude-retired-1"); v != Unknown {
		t.Errorf("no catalogue: %v, want Unknown", v)
	}
	if v, _ := noCat.Lookup("openai", "gpt-5"); v != Missing {
		t.Errorf("no catalogue, disabled provider: %v, want Missing", v)
	}
	cfg.Enabled = []string{"anthropic"}
	if v, why := ms.Lookup("local", "llama"); v != Missing || !strings.Contains(why, "enabled_providers") {
		t.Errorf("a provider enabled_providers leaves out: %v %q", v, why)
	}
}

func TestDefault(t *testing.T) {
	cat := &Catalog{Providers: map[string]map[string]bool{"anthropic": {"claude-sonnet-4-5": true}}}
	ms := &Models{Config: &Config{Model: "anthropic/claude-sonnet-4-5"}, Catalog: cat}
	if p, m, ok := ms.Default(); !ok || p != "anthropic" || m != "claude-sonnet-4-5" {
		t.Errorf("configured model: %s/%s %v", p, m, ok)
	}
	ms.Config.Model = "anthropic/claude-retired-1"
	if _, _, ok := ms.Default(); ok {
		t.Error("a configured model OpenCode does not have is no default")
	}
	ms.Config = &Config{Providers: map[string]*Provider{"local": {Models: []string{"llama"}}}}
	if p, m, ok := ms.Default(); !ok || p != "local" || m != "llama" {
		t.Errorf("the config's one model: %s/%s %v", p, m, ok)
	}
	ms.Config.Providers["local"].Models = []string{"llama", "qwen"}
	if _, _, ok := ms.Default(); ok {
		t.Error("two models and no configured one: no default")
	}
}

func TestLoadCatalog(t *testing.T) {
	home := t.TempDir()
	if c, err := envOf(home, nil).LoadCatalog(); c != nil || err != nil {
		t.Errorf("no cached catalogue: %v %v", c, err)
	}
	write(t, filepath.Join(home, ".cache", "opencode", "models.json"), `{"anthropic": {"id": "anthropic", "models": {"claude-sonnet-4-5": {}}}}`)
	c, err := envOf(home, nil).LoadCatalog()
	if err != nil || c == nil || !c.Providers["anthropic"]["claude-sonnet-4-5"] {
		t.Fatalf("cached catalogue: %+v %v", c, err)
	}
	other := filepath.Join(home, "models.json")
	write(t, other, `not json`)
	if _, err := envOf(home, map[string]string{"OPENCODE_MODELS_PATH": other}).LoadCatalog(); err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("$OPENCODE_MODELS_PATH unreadable: %v", err)
	}
}

func TestResolveProject(t *testing.T) {
	root := t.TempDir()
	plain := filepath.Join(root, "plain")
	repo := filepath.Join(root, "repo")
	fresh := filepath.Join(root, "fresh")
	wt := filepath.Join(root, "wt")
	write(t, filepath.Join(plain, "f"), "")
	write(t, filepath.Join(repo, ".git", "opencode"), "1f2e3d\n")
	write(t, filepath.Join(repo, "sub", "f"), "")
	write(t, filepath.Join(fresh, ".git", "HEAD"), "")
	write(t, filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	for _, c := range []struct{ dir, id, why string }{
		{filepath.Join(repo, "sub"), "1f2e3d", ""},
		{wt, "1f2e3d", ""},
		{fresh, "", "has cached no project id"},
		{filepath.Join(root, "gone"), "", "does not exist on this machine"},
		{"", "", "records no directory"},
	} {
		r := ResolveProject(c.dir)
		if r.ID != c.id || !strings.Contains(r.Why, c.why) {
			t.Errorf("%s: %+v, want id %q, why %q", c.dir, r, c.id, c.why)
		}
	}
	// Outside any repository: global, unless a .git sits above the
	// temporary directory.
	if _, err := os.Stat(filepath.Join(filepath.Dir(root), ".git")); err != nil {
		if r := ResolveProject(plain); r.ID != GlobalProject {
			t.Errorf("a directory outside git: %+v", r)
		}
	}
}

// A Resolver reads a directory's project cache once: a second session of
// the same directory does not read it again.
func TestResolverProjectOnce(t *testing.T) {
	repo := t.TempDir()
	write(t, filepath.Join(repo, ".git", "opencode"), "1f2e3d\n")
	r := NewResolver(Env{})
	if got := r.Project(repo); got.ID != "1f2e3d" {
		t.Fatalf("first resolution: %+v", got)
	}
	write(t, filepath.Join(repo, ".git", "opencode"), "changed\n")
	if got := r.Project(repo); got.ID != "1f2e3d" {
		t.Errorf("second resolution read the cache again: %+v", got)
	}
	if got := NewResolver(Env{}).Project(repo); got.ID != "changed" {
		t.Errorf("a new resolver: %+v", got)
	}
}

// A model's limits come from the catalogue OpenCode caches, and the
// config's `limit` overrides them key by key; a model neither gives a
// context limit has none.
func TestModelLimit(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, ".cache", "opencode", "models.json"),
		`{"anthropic": {"models": {"claude-sonnet-4-5": {"limit": {"context": 200000, "output": 64000}}, "claude-x": {}}}}`)
	write(t, filepath.Join(home, ".config", "opencode", "opencode.jsonc"),
		`{"provider": {"anthropic": {"models": {"claude-sonnet-4-5": {"limit": {"context": 40000}}}}, "local": {"models": {"small": {"limit": {"context": 8192, "output": 1024}}}}}}`)
	r := NewResolver(envOf(home, nil))
	ms, err := r.Models("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		provider, model string
		want            Limit
		source          string
		ok              bool
	}{
		{"anthropic", "claude-sonnet-4-5", Limit{Context: 40000, Output: 64000}, "your opencode config", true},
		{"local", "small", Limit{Context: 8192, Output: 1024}, "your opencode config", true},
		{"anthropic", "claude-x", Limit{}, "", false},
		{"openai", "gpt-5", Limit{}, "", false},
	} {
		l, src, ok := ms.Limit(c.provider, c.model)
		if l != c.want || src != c.source || ok != c.ok {
			t.Errorf("%s/%s: %+v %q %v, want %+v %q %v", c.provider, c.model, l, src, ok, c.want, c.source, c.ok)
		}
	}
	write(t, filepath.Join(home, ".config", "opencode", "opencode.jsonc"), `{}`)
	ms, _ = NewResolver(envOf(home, nil)).Models("")
	if l, src, ok := ms.Limit("anthropic", "claude-sonnet-4-5"); !ok || l.Context != 200000 || !strings.Contains(src, "models.json") {
		t.Errorf("catalogue only: %+v %q %v", l, src, ok)
	}
}

// TestPackage: the AI SDK package OpenCode loads for a model, in its order:
// the config's model, the config's provider, the catalogue's model, the
// catalogue's provider, then @ai-sdk/openai-compatible for a model either
// defines; "" for a model neither has.
func TestPackage(t *testing.T) {
	cat := &Catalog{
		Providers: map[string]map[string]bool{"opencode": {"claude-sonnet-4-5": true, "kimi-k2": true}, "lmstudio": {"qwen": true}, "bare": {"m": true}},
		NPM:       map[string]string{"opencode": "@ai-sdk/openai-compatible", "lmstudio": "@ai-sdk/openai-compatible"},
		ModelNPM:  map[string]map[string]string{"opencode": {"claude-sonnet-4-5": "@ai-sdk/anthropic"}},
	}
	cfg := &Config{Providers: map[string]*Provider{
		"vllm":     {Models: []string{"qwen3-vl"}},
		"proxy":    {Models: []string{"claude", "gpt"}, NPM: "@ai-sdk/anthropic", ModelNPM: map[string]string{"gpt": "@ai-sdk/openai"}},
		"lmstudio": {Models: []string{"own"}, NPM: "@ai-sdk/groq"},
	}}
	ms := &Models{Config: cfg, Catalog: cat}
	for _, c := range []struct{ provider, model, want string }{
		{"vllm", "qwen3-vl", OpenAICompatible},                 // the config's model, no npm anywhere
		{"proxy", "claude", "@ai-sdk/anthropic"},               // the config's provider
		{"proxy", "gpt", "@ai-sdk/openai"},                     // the config's model
		{"opencode", "claude-sonnet-4-5", "@ai-sdk/anthropic"}, // the catalogue's model
		{"opencode", "kimi-k2", OpenAICompatible},              // the catalogue's provider
		{"bare", "m", OpenAICompatible},                        // a catalogue model, no npm
		{"lmstudio", "own", "@ai-sdk/groq"},                    // the config over the catalogue
		{"lmstudio", "qwen", OpenAICompatible},                 // not the config's: the catalogue's
		{"vllm", "other", ""},                                  // neither has the model
		{"nowhere", "m", ""},
	} {
		if got := ms.Package(c.provider, c.model); got != c.want {
			t.Errorf("Package(%s, %s) = %q, want %q", c.provider, c.model, got, c.want)
		}
	}
}

// TestPackageFromFiles: npm is read from the config files and the
// catalogue as OpenCode writes them.
func TestPackageFromFiles(t *testing.T) {
	home := t.TempDir()
	cache := filepath.Join(home, "models.json")
	write(t, cache, `{"lmstudio":{"npm":"@ai-sdk/openai-compatible","models":{"qwen":{}}},"opencode":{"npm":"@ai-sdk/openai-compatible","models":{"claude":{"provider":{"npm":"@ai-sdk/anthropic"}}}}}`)
	env := Env{Home: home, Getenv: func(k string) string {
		switch k {
		case "OPENCODE_MODELS_PATH":
			return cache
		case "OPENCODE_CONFIG_CONTENT":
			return `{"provider":{"vllm":{"npm":"@ai-sdk/openai-compatible","models":{"a":{"provider":{"npm":"@ai-sdk/anthropic"}},"b":{}}}}}`
		}
		return ""
	}}
	ms, err := NewResolver(env).Models("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ provider, model, want string }{
		{"vllm", "a", "@ai-sdk/anthropic"},
		{"vllm", "b", OpenAICompatible},
		{"lmstudio", "qwen", OpenAICompatible},
		{"opencode", "claude", "@ai-sdk/anthropic"},
	} {
		if got := ms.Package(c.provider, c.model); got != c.want {
			t.Errorf("Package(%s, %s) = %q, want %q", c.provider, c.model, got, c.want)
		}
	}
}
