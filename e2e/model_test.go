//go:build acceptance

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// TestUnknownModel proves SF213 on real OpenCode 1.18.33: given the models
// this OpenCode has (`opencode models`, written as the catalogue OpenCode
// caches), sessfix reports exactly the sessions OpenCode cannot resume
// because their row names a model or provider it does not have (#42781),
// the remedy the finding names (`--model`) resumes them, and `sessfix fix`
// gives the row the config's model, after which OpenCode resumes the
// session as it is; `sessfix undo` restores the row exactly. The error
// line OpenCode logs, given to `sessfix diagnose`, is mapped to SF213 and
// its repair, and `sessfix sessions` lists the session with the error.
func TestUnknownModel(t *testing.T) {
	t.Parallel()
	b, c := onBase(t, opencodetest.V1_18)
	e, d := c.e, c.d
	ctx := testCtx(t, 10*time.Minute)

	res, err := e.Run(ctx, "models")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode models: %v\n%s", err, res)
	}
	catalogue := map[string]map[string]map[string]any{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		provider, model, ok := strings.Cut(strings.TrimSpace(line), "/")
		if !ok || strings.ContainsAny(provider, " \t") {
			continue
		}
		if catalogue[provider] == nil {
			catalogue[provider] = map[string]map[string]any{"models": {}}
		}
		catalogue[provider]["models"][model] = map[string]any{}
	}
	if catalogue["anthropic"] == nil || catalogue["anthropic"]["models"]["claude-sonnet-4-5"] == nil {
		t.Fatalf("opencode models lists no anthropic/claude-sonnet-4-5:\n%s", res)
	}
	path := filepath.Join(t.TempDir(), "models.json")
	raw, _ := json.Marshal(catalogue)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENCODE_MODELS_PATH=" + path}
	sf213 := func() map[string]finding {
		t.Helper()
		args := append([]string{"scan", "--format", "json", "--select", "SF213"}, scanFlags...)
		res := sessfixEnv(t, e, env, append(args, e.DataDir())...)
		var doc scanDoc
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
			t.Fatalf("scan JSON: %v\n%s", err, res)
		}
		out := map[string]finding{}
		for _, f := range doc.Findings {
			out[f.Session] = f
		}
		return out
	}
	if got := sf213(); len(got) != 0 {
		t.Fatalf("SF213 on sessions OpenCode resumes: %+v", got)
	}

	for _, c := range []struct{ column, value, says string }{
		{"id", "claude-retired-1", "provider anthropic has no model claude-retired-1"},
		{"providerID", "retired-provider", "neither the config nor the models catalogue has provider retired-provider"},
	} {
		d.exec(`UPDATE session SET model = json_set(model, '$.`+c.column+`', ?) WHERE id = ?`, c.value, b.loop)
		got := sf213()
		f, ok := got[b.loop]
		if len(got) != 1 || !ok || f.Severity != "error" || !strings.Contains(f.Message, c.says) {
			t.Fatalf("%s %s: SF213 %+v, want one error on %s saying %q", c.column, c.value, got, b.loop, c.says)
		}
		e.Mock.Reset()
		res, err := e.Resume(ctx, b.loop, "Please continue.", "--print-logs", "--log-level", "WARN")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || len(e.Mock.ChatRequests()) != 0 || !strings.Contains(res.Stderr, "ProviderModelNotFoundError") {
			t.Fatalf("%s %s: OpenCode resumed the session SF213 reports:\n%s", c.column, c.value, res)
		}
		// The line of OpenCode's log a user pastes: diagnose names SF213
		// and the repair, and sessions lists the session with an error.
		diagnoseLogged(t, e, env, b.loop, res.Stderr, "ProviderModelNotFoundError", "SF213", "setSessionModel")
		list := sessfixEnv(t, e, env, "sessions", "--format", "json", e.DataDir())
		var ld struct {
			Sessions []struct {
				ID     string `json:"id"`
				Health struct {
					Errors int `json:"errors"`
				} `json:"health"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(list.Stdout), &ld); err != nil {
			t.Fatalf("sessions JSON: %v\n%s", err, list)
		}
		for _, s := range ld.Sessions {
			if s.ID == b.loop && s.Health.Errors == 0 {
				t.Fatalf("%s %s: sessions lists the session OpenCode cannot resume with no error:\n%s", c.column, c.value, list.Stdout)
			}
		}
		e.Mock.Reset()
		res, err = e.Resume(ctx, b.loop, "Please continue.", "--model", opencodetest.DefaultModel)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || len(e.Mock.ChatRequests()) == 0 {
			t.Fatalf("%s %s: --model %s did not resume the session:\n%s", c.column, c.value, opencodetest.DefaultModel, res)
		}

		// sessfix fix gives the row the config's model (the harness's
		// DefaultModel), undo puts the retired one back byte for byte, and
		// the repair made again resumes without --model.
		d.exec(`UPDATE session SET model = json_set(model, '$.`+c.column+`', ?) WHERE id = ?`, c.value, b.loop)
		before := storeState(t, d)
		fix := func() {
			t.Helper()
			res := sessfixEnv(t, e, env, "fix", "--yes", e.DataDir())
			if res.ExitCode != 0 || !strings.Contains(res.Stdout+res.Stderr, "setSessionModel") {
				t.Fatalf("%s %s: fix --yes:\n%s", c.column, c.value, res)
			}
			if got := sf213(); len(got) != 0 {
				t.Fatalf("%s %s: after sessfix fix: SF213 %+v", c.column, c.value, got)
			}
		}
		fix()
		if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
			t.Fatalf("undo --last:\n%s", res)
		}
		if storeState(t, d) != before || len(sf213()) != 1 {
			t.Fatalf("%s %s: undo did not put the session's row back exactly", c.column, c.value)
		}
		fix()
		e.Mock.Reset()
		res, err = e.Resume(ctx, b.loop, "Please continue.")
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != 0 || len(e.Mock.ChatRequests()) == 0 {
			t.Fatalf("%s %s: the repaired session did not resume:\n%s", c.column, c.value, res)
		}
		if got := sf213(); len(got) != 0 {
			t.Fatalf("%s %s: after the resume: SF213 %+v", c.column, c.value, got)
		}
		d.exec(`UPDATE session SET model = json_set(model, '$.id', 'claude-sonnet-4-5', '$.providerID', 'anthropic') WHERE id = ?`, b.loop)
	}
}

// diagnoseLogged gives `sessfix diagnose` the first line of OpenCode's log
// (stderr of a run with --print-logs) that holds marker, as a user pastes
// it, and requires the session's finding of rule code as its cause and one
// edit by mutation as its repair.
func diagnoseLogged(t *testing.T, e *opencodetest.Env, env []string, session, stderr, marker, code, mutation string) {
	t.Helper()
	var logged string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, marker) {
			logged = strings.TrimSpace(line)
			break
		}
	}
	if logged == "" {
		t.Fatalf("OpenCode's log has no line with %q:\n%s", marker, stderr)
	}
	res := sessfixEnv(t, e, env, "diagnose", "--format", "json", "--session", session, "--error", logged, e.DataDir())
	var doc struct {
		Rules  []string  `json:"rules"`
		Causes []finding `json:"causes"`
		Fix    struct {
			Edits []string `json:"edits"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("diagnose JSON: %v\n%s", err, res)
	}
	if res.ExitCode != 1 || strings.Join(doc.Rules, ",") != code || len(doc.Causes) != 1 || doc.Causes[0].Code != code ||
		len(doc.Fix.Edits) != 1 || !strings.Contains(doc.Fix.Edits[0], mutation) {
		t.Fatalf("diagnose of OpenCode's logged error %q: %+v, want %s as the cause, repaired by %s\n%s", logged, doc, code, mutation, res)
	}
}
