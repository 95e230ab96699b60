package scan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// SF212 on the recorded 1.18.33 store, broken as internal/opencodetest's
// graph-missing-project and graph-shadow-project experiments break it.
func TestSessionProject(t *testing.T) {
	const (
		gone     = "ses_e012acd97ffeUavLGQWWTi4jHW" // its project row deleted
		shadowed = "ses_e012a9fbfffeKtIFkrDCzeMk55" // on a second row for its repository
		plain    = "ses_e012a6510ffemP4Gukdz1ZnYpe" // a non-git directory, project global
	)
	path := realDBCopy(t)
	repo, nogit := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	const first = "8f2c1d0e9b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"
	if err := os.WriteFile(filepath.Join(repo, ".git", "opencode"), []byte(first), 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.ExecSQL(t, path, "PRAGMA foreign_keys = OFF",
		`INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) SELECT '`+first+`', '`+repo+`', 'git', time_created, time_updated, sandboxes FROM project WHERE id = 'global'`,
		`INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) SELECT 'b1c2d3e4shadow', '`+repo+`', 'git', time_created, time_updated, sandboxes FROM project WHERE id = 'global'`,
		`UPDATE session SET project_id = 'b1c2d3e4shadow', directory = '`+repo+`' WHERE id = '`+shadowed+`'`,
		`UPDATE session SET project_id = 'deleted0project', directory = '`+nogit+`' WHERE id = '`+gone+`'`,
		`UPDATE session SET directory = '`+nogit+`' WHERE id = '`+plain+`'`,
	)
	sessions := storetest.LoadAll(t, storetest.OpenOne(t, path))
	check := func(opts *Options) map[string]Finding {
		got := map[string]Finding{}
		opts.Select = []string{"SF212"}
		for _, s := range sessions {
			for _, f := range CheckSession(s, opts) {
				got[f.SessionID] = f
			}
		}
		return got
	}

	// Without reading the filesystem only the missing row is certain.
	got := check(&Options{})
	if f, ok := got[gone]; len(got) != 1 || !ok || f.Severity != Error || f.Location.Table != "session" || f.Fix != "" ||
		f.Message != "its project deleted0project has no project row: opencode lists it under no project and cannot resume it" {
		t.Errorf("without the filesystem: %+v", got)
	}

	got = check(&Options{OpenCode: ocenv.NewResolver(ocenv.Env{})})
	if len(got) != 2 {
		t.Errorf("findings on %d sessions, want 2: %+v", len(got), got)
	}
	if f := got[gone]; !strings.HasSuffix(f.Message, "; its directory resolves to project global") {
		t.Errorf("missing row: %q", f.Message)
	}
	if f := got[gone]; f.Fix != "setSessionProject" {
		t.Errorf("missing row, global has one: fix %q", f.Fix)
	}
	if f := got[shadowed]; f.Fix != "setSessionProject" {
		t.Errorf("shadowed, the resolved project has a row: fix %q", f.Fix)
	}
	if f := got[shadowed]; f.Severity != Warning ||
		f.Message != "opencode lists the sessions of "+repo+" under project "+first+", not under this session's project b1c2d3e4shadow, so its session list leaves this one out" {
		t.Errorf("shadowed: %s %q", f.Severity, f.Message)
	}
}

// A directory whose project has no row yet gets no repair: sessfix never
// invents a project row.
func TestSessionProjectWithoutARowIsReportOnly(t *testing.T) {
	const id = "ses_e012acd97ffeUavLGQWWTi4jHW"
	path := realDBCopy(t)
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".git", "opencode"), []byte("8f2c1d0e9b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"), 0o644); err != nil {
		t.Fatal(err)
	}
	storetest.ExecSQL(t, path, "PRAGMA foreign_keys = OFF",
		`UPDATE session SET project_id = 'deleted0project', directory = '`+repo+`' WHERE id = '`+id+`'`)
	opts := &Options{Select: []string{"SF212"}, OpenCode: ocenv.NewResolver(ocenv.Env{})}
	s := storetest.Load(t, storetest.OpenOne(t, path), id)
	fs := CheckSession(s, opts)
	if len(fs) != 1 || fs[0].Fix != "" || !strings.HasSuffix(fs[0].Message, "(no row yet: opencode makes it when it next runs there)") {
		t.Fatalf("findings %+v, want one without a fix", fs)
	}
	if p, ok := opencode.ProjectRepair(s, opts.OpenCode); ok {
		t.Errorf("ProjectRepair = %s, want none", p)
	}
}
