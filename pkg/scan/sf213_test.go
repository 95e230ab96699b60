package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// SF213 on the recorded 1.18.33 store: the session row's model retired the
// way internal/opencodetest's graph-unknown-model experiment retires it
// (OpenCode 1.18.33 then exits 1 on resume), judged against a cached models
// catalogue and the user's config.
func TestUnknownModel(t *testing.T) {
	path := realDBCopy(t)
	const retired = "ses_e012acd97ffeUavLGQWWTi4jHW"
	storetest.ExecSQL(t, path, `UPDATE session SET model = json_set(model, '$.id', 'claude-retired-1') WHERE id = '`+retired+`'`)
	sessions := storetest.LoadAll(t, storetest.OpenOne(t, path))

	home := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := ocenv.Env{Home: home, Getenv: func(string) string { return "" }}
	check := func() map[string]Finding {
		got := map[string]Finding{}
		opts := &Options{Select: []string{"SF213"}, OpenCode: ocenv.NewResolver(env)}
		for _, s := range sessions {
			for _, f := range CheckSession(s, opts) {
				got[f.SessionID] = f
			}
		}
		return got
	}

	// No catalogue cached, no config: nothing can be told.
	if got := check(); len(got) != 0 {
		t.Errorf("without a catalogue: %v", got)
	}
	write(".cache/opencode/models.json", `{"anthropic": {"models": {"claude-sonnet-4-5": {}, "claude-haiku-4-5": {}}}}`)
	got := check()
	f, ok := got[retired]
	if len(got) != 1 || !ok {
		t.Fatalf("findings on %v, want only %s", got, retired)
	}
	if f.Severity != Error || f.Location.Table != "session" || f.Fix != "" ||
		!strings.Contains(f.Message, "its model anthropic/claude-retired-1 is not one opencode has here (provider anthropic has no model claude-retired-1)") ||
		strings.Contains(f.Message, "your config's model") {
		t.Errorf("finding %s %s %q fix %q", f.Severity, f.Location.Table, f.Message, f.Fix)
	}
	// The config's default model is named; a blacklist hides a model the
	// catalogue has.
	write(".config/opencode/opencode.json", `{"model": "anthropic/claude-haiku-4-5", "provider": {"anthropic": {"blacklist": ["claude-sonnet-4-5"]}}}`)
	got = check()
	if len(got) != 3 || !strings.HasSuffix(got[retired].Message, "; your config's model is anthropic/claude-haiku-4-5") {
		t.Errorf("with a blacklist and a default: %v", got)
	}
	// With a default OpenCode has, fix gives it to every session.
	for id, f := range got {
		if f.Fix != "setSessionModel" {
			t.Errorf("%s: fix %q with a default model, want setSessionModel", id, f.Fix)
		}
		if p, m, ok := opencode.ModelRepair(sessionByID(sessions, id), ocenv.NewResolver(env)); !ok || p+"/"+m != "anthropic/claude-haiku-4-5" {
			t.Errorf("%s: ModelRepair = %s/%s %v", id, p, m, ok)
		}
	}
}

func sessionByID(ss []*store.Session, id string) *store.Session {
	for _, s := range ss {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// realDBCopy is a copy of the recorded 1.18.33 database to break.
func realDBCopy(t *testing.T) string { return realstore.Copy(t, ocrelease.V1_18).Path }
