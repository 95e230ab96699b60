package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sessfix/sessfix/pkg/scan"
)

// File names sessfix looks for, in this order. Two of them in one
// directory is an error: sessfix will not guess which one is meant.
var Names = []string{".sessfix.json", ".sessfix.yaml", ".sessfix.yml"}

// ErrInvalid is wrapped by every error about a config file's contents.
var ErrInvalid = errors.New("invalid sessfix config")

// Config is the contents of a config file. Empty fields mean "not set":
// the command's default applies.
type Config struct {
	// Path is the file the config was read from; empty for the zero config.
	Path string `json:"-" yaml:"-"`

	// Select and Ignore are rule codes or prefixes, as --select/--ignore.
	Select []string `json:"select,omitempty" yaml:"select,omitempty"`
	Ignore []string `json:"ignore,omitempty" yaml:"ignore,omitempty"`
	// FailOn is a --fail-on value: a severity, rule codes, or both.
	FailOn string `json:"fail-on,omitempty" yaml:"fail-on,omitempty"`
	// Strategies pick a repair per rule code, as --strategy CODE=NAME.
	Strategies map[string]string `json:"strategies,omitempty" yaml:"strategies,omitempty"`
	// Placeholder is the text for empty and injected text parts.
	Placeholder string `json:"placeholder,omitempty" yaml:"placeholder,omitempty"`
	// Settle is a Go duration ("5s", "2m"), as --settle.
	Settle string `json:"settle,omitempty" yaml:"settle,omitempty"`
	// Suppress accepts individual findings as they are.
	Suppress []Suppression `json:"suppress,omitempty" yaml:"suppress,omitempty"`
}

// Suppression accepts the findings it matches: they are still reported,
// marked suppressed with Reason, but never fail a run and are never fixed.
// A finding matches when its code starts with Code and every other field
// that is set matches.
type Suppression struct {
	// Code is a rule code or prefix ("SF104", "SF2"). Required.
	Code string `json:"code" yaml:"code"`
	// Session, Message and Part are ids the finding must carry.
	Session string `json:"session,omitempty" yaml:"session,omitempty"`
	Message string `json:"message,omitempty" yaml:"message,omitempty"`
	Part    string `json:"part,omitempty" yaml:"part,omitempty"`
	// Path is a glob the finding's file (or store) must match, relative
	// to the config file's directory unless absolute. `*` matches within
	// one path element, `**` any number of elements.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
	// Reason says why the finding is accepted. Required.
	Reason string `json:"reason" yaml:"reason"`
}

// Find returns the config file in dir or the nearest parent, stopping at
// the repository root (a directory that holds .git); "" when there is none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		var found []string
		for _, n := range Names {
			p := filepath.Join(dir, n)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				found = append(found, p)
			}
		}
		switch {
		case len(found) > 1:
			return "", fmt.Errorf("%w: both %s and %s exist; keep one of them", ErrInvalid, found[0], found[1])
		case len(found) == 1:
			return found[0], nil
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Discover loads the config file Find finds from dir; the zero Config when
// there is none.
func Discover(dir string) (*Config, error) {
	path, err := Find(dir)
	if err != nil || path == "" {
		return &Config{}, err
	}
	return Load(path)
}

// Load reads and validates one config file. JSON and YAML are told apart
// by the file's extension (.json, else YAML).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is in the message already
		}
		return nil, fmt.Errorf("cannot read the sessfix config %s: %w", path, err)
	}
	c, err := Parse(data, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// Parse decodes and validates a config; isJSON selects JSON, else YAML.
// Unknown keys are errors, so a misspelt key does not go unnoticed.
func Parse(data []byte, isJSON bool) (*Config, error) {
	c := &Config{}
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s", ErrInvalid, jsonError(err))
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: %s", ErrInvalid, yamlError(err))
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate checks rule codes, the settle duration and every suppression.
// Strategy names and the placeholder are checked by the fix command, which
// knows them.
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	for _, kv := range []struct {
		key  string
		list []string
	}{{"select", c.Select}, {"ignore", c.Ignore}} {
		if err := (&scan.Options{Select: upper(kv.list)}).ValidateFilters(); err != nil {
			return bad("%s: %v", kv.key, err)
		}
	}
	codes := make([]string, 0, len(c.Strategies))
	for code := range c.Strategies {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		if scan.Lookup(code) == nil && !isPreflight(code) {
			return bad("strategies: unknown rule code %q (see `sessfix rules`)", code)
		}
	}
	if c.Settle != "" {
		d, err := time.ParseDuration(c.Settle)
		if err != nil || d < 0 {
			return bad("settle: %q is not a duration like 5s or 2m", c.Settle)
		}
	}
	for i, s := range c.Suppress {
		where := fmt.Sprintf("suppress[%d]", i)
		if strings.TrimSpace(s.Code) == "" {
			return bad("%s: code is required: name the rule code (or prefix) of the finding to accept", where)
		}
		if err := (&scan.Options{Select: []string{strings.ToUpper(s.Code)}}).ValidateFilters(); err != nil {
			return bad("%s: %v", where, err)
		}
		if strings.TrimSpace(s.Reason) == "" {
			return bad("%s (%s): reason is required: say why this finding is accepted", where, s.Code)
		}
		if s.Session == "" && s.Message == "" && s.Part == "" && s.Path == "" {
			return bad("%s (%s): add a session, message, part or path so the suppression does not silence the rule everywhere (use ignore for that)", where, s.Code)
		}
		if s.Path != "" {
			if _, err := matchGlob(s.Path, "x"); err != nil {
				return bad("%s (%s): bad path glob %q: %v", where, s.Code, s.Path, err)
			}
		}
	}
	return nil
}

// SettleDuration returns the settle window, and false when it is not set.
func (c *Config) SettleDuration() (time.Duration, bool) {
	if c == nil || c.Settle == "" {
		return 0, false
	}
	d, err := time.ParseDuration(c.Settle)
	return d, err == nil
}

// StrategyPairs returns Strategies as sorted CODE=NAME pairs, the form
// --strategy takes.
func (c *Config) StrategyPairs() []string {
	if c == nil {
		return nil
	}
	var out []string
	for code, name := range c.Strategies {
		out = append(out, strings.ToUpper(code)+"="+name)
	}
	sort.Strings(out)
	return out
}

// Apply marks every finding a suppression matches (the first matching
// suppression wins) and returns the suppressions that matched nothing, so
// stale entries can be reported. Findings are changed in place.
func (c *Config) Apply(findings []scan.Finding) (unused []Suppression) {
	if c == nil || len(c.Suppress) == 0 {
		return nil
	}
	used := make([]bool, len(c.Suppress))
	for i := range findings {
		f := &findings[i]
		if f.Suppression != nil {
			continue
		}
		for j, s := range c.Suppress {
			if c.matches(s, *f) {
				f.Suppression = &scan.Suppression{Reason: s.Reason, Source: c.Path}
				used[j] = true
				break
			}
		}
	}
	for j, s := range c.Suppress {
		if !used[j] {
			unused = append(unused, s)
		}
	}
	return unused
}

// Suppressed reports whether a suppression matches f.
func (c *Config) Suppressed(f scan.Finding) bool {
	if c == nil {
		return false
	}
	for _, s := range c.Suppress {
		if c.matches(s, f) {
			return true
		}
	}
	return false
}

func (c *Config) matches(s Suppression, f scan.Finding) bool {
	code := strings.ToUpper(strings.TrimSpace(s.Code))
	if !strings.HasPrefix(strings.ToUpper(f.Code), code) {
		return false
	}
	if (s.Session != "" && s.Session != f.SessionID) ||
		(s.Message != "" && s.Message != f.MessageID) ||
		(s.Part != "" && s.Part != f.PartID) {
		return false
	}
	if s.Path == "" {
		return true
	}
	for _, p := range []string{f.Location.Path, f.StorePath} {
		if p != "" && c.pathMatches(s.Path, p) {
			return true
		}
	}
	return false
}

// pathMatches matches a finding's path against a glob: absolute globs
// against the absolute path, relative ones against the path relative to the
// config file's directory.
func (c *Config) pathMatches(glob, p string) bool {
	abs, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	target := abs
	if !filepath.IsAbs(glob) && !strings.HasPrefix(glob, "/") {
		base := "."
		if c.Path != "" {
			base = filepath.Dir(c.Path)
		}
		base, err = filepath.Abs(base)
		if err != nil {
			return false
		}
		rel, err := filepath.Rel(base, abs)
		if err != nil {
			return false
		}
		target = rel
	}
	ok, _ := matchGlob(filepath.ToSlash(glob), filepath.ToSlash(target))
	return ok
}

// matchGlob matches a slash path against a glob where `**` stands for any
// number of path elements and each other element is a path.Match pattern.
func matchGlob(glob, name string) (bool, error) {
	g := strings.Split(strings.Trim(glob, "/"), "/")
	n := strings.Split(strings.Trim(name, "/"), "/")
	for _, elem := range g {
		if elem == "**" {
			continue
		}
		if _, err := path.Match(elem, ""); err != nil {
			return false, err
		}
	}
	return matchElems(g, n), nil
}

func matchElems(g, n []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(n); i++ {
				if matchElems(g[1:], n[i:]) {
					return true
				}
			}
			return false
		}
		if len(n) == 0 {
			return false
		}
		if ok, _ := path.Match(g[0], n[0]); !ok {
			return false
		}
		g, n = g[1:], n[1:]
	}
	return len(n) == 0
}

func upper(in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.ToUpper(s))
		}
	}
	return out
}

// isPreflight reports whether code is in the preflight range SF150–SF169,
// whose rules may not all be registered yet but share repair strategies.
func isPreflight(code string) bool {
	code = strings.ToUpper(code)
	return scan.FamilyPreflight.Has(code)
}
