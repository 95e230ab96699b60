package fix

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/ocenv/ocenvtest"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// The repairs of a session's own row, on the recorded 1.18.33 store:
// SF212 points a session whose project row is gone at the project its
// directory resolves to, SF213 gives a session with a retired model the
// config's default model; a session whose directory resolves to a project
// without a row is left alone (no row is invented). Undo restores every
// row.
func TestSessionRowRepairs(t *testing.T) {
	const (
		gone     = "ses_e012acd97ffeUavLGQWWTi4jHW" // its project row deleted
		retired  = "ses_e012a9fbfffeKtIFkrDCzeMk55" // its model retired
		unmadeID = "ses_e012a6510ffemP4Gukdz1ZnYpe" // in a repository OpenCode has no row for
	)
	path := realstore.Copy(t, ocrelease.V1_18).Path
	nogit, repo, home := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "opencode"), []byte("8f2c1d0e9b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"), 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.ExecSQL(t, path, "PRAGMA foreign_keys = OFF",
		`UPDATE session SET directory = '`+nogit+`'`,
		`UPDATE session SET project_id = 'deleted0project' WHERE id = '`+gone+`'`,
		`UPDATE session SET model = json_set(model, '$.id', 'claude-retired-1', '$.variant', 'high') WHERE id = '`+retired+`'`,
		`UPDATE session SET project_id = 'deleted1project', directory = '`+repo+`' WHERE id = '`+unmadeID+`'`,
	)
	ocenvtest.Write(t, home, map[string]string{
		".cache/opencode/models.json":    `{"anthropic": {"models": {"claude-sonnet-4-5": {}, "claude-haiku-4-5": {}}}}`,
		".config/opencode/opencode.json": `{"model": "anthropic/claude-haiku-4-5"}`,
	})
	before := storetest.State(t, path, store.ShapeSQLite)

	p := testPipeline(t)
	p.Scan.OpenCode = ocenv.NewResolver(ocenv.Env{Home: home, Getenv: func(string) string { return "" }})
	p.Fix.Scan = p.Scan
	st := storetest.OpenOne(t, path)
	targets, err := p.Targets(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, p.Plan, targets)
	plans := map[string]Outcome{}
	for _, o := range got {
		plans[o.ID] = o
	}
	want := map[string]string{gone: "setSessionProject", retired: "setSessionModel"}
	for id, mutation := range want {
		o := plans[id]
		if !o.Changes() || len(o.Plan.Changes.Edits) != 1 || o.Plan.Changes.Edits[0].Mutation != mutation || o.Plan.Changes.Edits[0].Kind != store.KindSession {
			t.Fatalf("%s: plan %+v, want one %s edit of the session", id, o.Plan, mutation)
		}
	}
	if o := plans[unmadeID]; o.Changes() || len(o.Plan.Unfixed) != 1 || o.Plan.Unfixed[0].Finding.Code != "SF212" {
		t.Fatalf("%s: plan %+v, want SF212 unfixed", unmadeID, o.Plan)
	}
	var planned []Outcome
	for _, o := range got {
		if o.Changes() {
			planned = append(planned, o)
		}
	}
	run, err := p.Apply(context.Background(), st, planned)
	if err != nil {
		t.Fatal(err)
	}

	sessions := map[string]*store.Session{}
	for _, s := range storetest.LoadAll(t, storetest.OpenOne(t, path)) {
		sessions[s.ID] = s
	}
	if got := sessions[gone].Info.Get("project_id").Str; got != "global" {
		t.Errorf("the repaired session's project is %q, want global", got)
	}
	if got := sessions[retired].Info.Get("model").Str; got != `{"id":"claude-haiku-4-5","providerID":"anthropic","variant":"default"}` {
		t.Errorf("the repaired session's model is %s", got)
	}
	for _, id := range []string{gone, retired} {
		for _, f := range scan.CheckSession(sessions[id], p.Scan) {
			if f.Code == "SF212" || f.Code == "SF213" {
				t.Errorf("%s still has %s: %s", id, f.Code, f.Message)
			}
		}
	}
	if _, err := backup.Undo(context.Background(), p.Write.Backup, run, false); err != nil {
		t.Fatal(err)
	}
	if after := storetest.State(t, path, store.ShapeSQLite); after != before {
		t.Fatalf("after undo:\n%s\nwant:\n%s", after, before)
	}
}

// The model SF213's repair gives a session is judged like any plan, for the
// family of the new model: a history the Responses API takes (a blank text
// part) but Anthropic rejects keeps its retired OpenAI model, the finding
// unfixed with the reason, rather than be switched to a model that fails.
func TestSessionModelRepairIsCheckedForTheNewFamily(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	path := realstore.Copy(t, ocrelease.V1_18).Path
	storetest.ExecSQL(t, path,
		`UPDATE session SET model = '{"id":"gpt-retired","providerID":"openai","variant":"default"}' WHERE id = '`+id+`'`,
		`UPDATE part SET data = json_set(data, '$.text', ' ') WHERE id = 'prt_1fed54cb3001lWExXDaIbvfo1U'`)
	_, env := ocenvtest.Home(t, map[string]string{
		".cache/opencode/models.json":    `{"anthropic": {"models": {"claude-sonnet-4-5": {}}}, "openai": {"models": {"gpt-5.2": {}}}}`,
		".config/opencode/opencode.json": `{"model": "anthropic/claude-sonnet-4-5"}`,
	})
	s := storetest.Load(t, storetest.OpenOne(t, path), id)
	so := &scan.Options{Now: testPipeline(t).Scan.Now, OpenCode: ocenv.NewResolver(env)}
	fs := scan.CheckSession(s, so)
	if len(fs) != 1 || fs[0].Code != "SF213" || fs[0].Fix != "setSessionModel" {
		t.Fatalf("findings %+v, want SF213 alone (the blank text is no defect for the Responses API)", fs)
	}
	plan, err := Plan(s, fs, Options{Scan: so, Now: so.Now})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changes.Empty() || len(plan.Unfixed) != 1 || !strings.Contains(plan.Unfixed[0].Reason, "model would cause SF151") {
		t.Fatalf("plan %+v, want SF213 unfixed because Anthropic rejects the blank text", plan)
	}
}

// TestOpenCodesOwnErrorIsRepairedThroughItsRule: `fix --error` given the
// error OpenCode logs for a session whose model it no longer has
// (ProviderModelNotFoundError, which no provider returns) repairs the
// session's SF213 finding by its default repair; a session without the
// finding is left alone, saying why.
func TestOpenCodesOwnErrorIsRepairedThroughItsRule(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	const text = "ProviderModelNotFoundError: Model not found: anthropic/claude-retired-1. Did you mean: anthropic/claude-sonnet-4-5?"
	path := realstore.Copy(t, ocrelease.V1_18).Path
	storetest.ExecSQL(t, path,
		`UPDATE session SET model = '{"id":"claude-retired-1","providerID":"anthropic","variant":"default"}' WHERE id = '`+id+`'`)
	_, env := ocenvtest.Home(t, map[string]string{
		".cache/opencode/models.json":    `{"anthropic": {"models": {"claude-sonnet-4-5": {}, "claude-haiku-4-5": {}}}}`,
		".config/opencode/opencode.json": `{"model": "anthropic/claude-haiku-4-5"}`,
	})
	so := &scan.Options{Now: testPipeline(t).Scan.Now, OpenCode: ocenv.NewResolver(env)}
	s := storetest.Load(t, storetest.OpenOne(t, path), id)
	plan, err := PlanFromError(s, text, Options{Scan: so, Now: so.Now})
	if err != nil {
		t.Fatal(err)
	}
	if e := plan.Changes.Edits; len(e) != 1 || e[0].Mutation != "setSessionModel" || e[0].Kind != store.KindSession || len(plan.Unfixed) != 0 {
		t.Fatalf("plan %+v, want one setSessionModel edit of the session and nothing unfixed", plan)
	}
	if i := slices.IndexFunc(plan.Fixed, func(r Repair) bool { return r.Finding.Code == scan.SF302 }); i < 0 ||
		plan.Fixed[i].Finding.Message != "the error given with --error, the one SF213 reports" {
		t.Errorf("the error's own step %+v, want it named as SF213's, not a provider's", plan.Fixed)
	}
	other := storetest.Load(t, storetest.OpenOne(t, path), "ses_e012a9fbfffeKtIFkrDCzeMk55")
	plan, err = PlanFromError(other, text, Options{Scan: so, Now: so.Now})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Changes.Empty() || len(plan.Unfixed) != 1 || !strings.Contains(plan.Unfixed[0].Reason, "the error is the one SF213 reports, and sessfix finds none of it in the session") {
		t.Fatalf("plan of a session with its model %+v, want nothing changed, saying why", plan)
	}
}
