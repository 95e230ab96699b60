package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/ocenv/ocenvtest"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestCommandsJudgeSessionsWithOpenCodesConfig: every command that judges
// a session reads what OpenCode reads outside its data dir, as scan does.
// A session whose model the user's OpenCode no longer has (SF213) is an
// error for scan; sessions lists it with that error, not as clean, and
// diagnose, given the error OpenCode logs, names the rule and its repair.
func TestCommandsJudgeSessionsWithOpenCodesConfig(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	path := realstore.Copy(t, ocrelease.V1_18).Path
	storetest.ExecSQL(t, path,
		`UPDATE session SET model = '{"id":"claude-retired-1","providerID":"anthropic","variant":"default"}' WHERE id = '`+id+`'`)
	_, ocEnv := ocenvtest.Home(t, map[string]string{
		".cache/opencode/models.json":    `{"anthropic": {"models": {"claude-sonnet-4-5": {}, "claude-haiku-4-5": {}}}}`,
		".config/opencode/opencode.json": `{"model": "anthropic/claude-haiku-4-5"}`,
	})
	env := func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.OpenCodeEnv = func() ocenv.Env { return ocEnv }
	}

	res := run(t, env, "scan", "--format", "json", "--settle=0", path)
	var scanned struct {
		Findings []struct{ Code, Session string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &scanned); err != nil {
		t.Fatalf("scan: %v\n%s", err, res.stdout)
	}
	if len(scanned.Findings) != 1 || scanned.Findings[0].Code != "SF213" || scanned.Findings[0].Session != id {
		t.Fatalf("scan found %+v, want SF213 in %s alone", scanned.Findings, id)
	}

	res = run(t, env, "sessions", "--format", "json", path)
	if res.code != 0 {
		t.Fatalf("sessions: exit %d\n%s", res.code, res.stderr)
	}
	var listed struct {
		Sessions []struct {
			ID     string `json:"id"`
			Health struct {
				Errors int `json:"errors"`
			} `json:"health"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &listed); err != nil {
		t.Fatalf("sessions: %v\n%s", err, res.stdout)
	}
	errs := map[string]int{}
	for _, s := range listed.Sessions {
		errs[s.ID] = s.Health.Errors
	}
	if len(errs) != 3 || errs[id] != 1 {
		t.Errorf("sessions lists errors %v, want 1 for %s (SF213) among 3 sessions", errs, id)
	}

	res = run(t, env, "diagnose", "--format", "json", "--session", id, "--error",
		"ProviderModelNotFoundError: Model not found: anthropic/claude-retired-1", path)
	var diagnosed struct {
		Rules  []string                `json:"rules"`
		Causes []struct{ Code string } `json:"causes"`
		Fix    struct {
			Edits []string `json:"edits"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &diagnosed); err != nil {
		t.Fatalf("diagnose: %v\n%s", err, res.stdout)
	}
	if res.code != 1 || len(diagnosed.Rules) != 1 || diagnosed.Rules[0] != "SF213" || len(diagnosed.Causes) != 1 ||
		diagnosed.Causes[0].Code != "SF213" || len(diagnosed.Fix.Edits) != 1 || !strings.HasSuffix(diagnosed.Fix.Edits[0], "setSessionModel (model set to anthropic/claude-haiku-4-5, the model your config makes opencode's default)") {
		t.Errorf("diagnose: exit %d, %+v; want SF213 as the cause, repaired by setSessionModel\n%s", res.code, diagnosed, res.stdout)
	}
}
