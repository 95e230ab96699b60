package backups

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestListNamesADatabaseRun: a database-level run (here a reindex of a
// copy of the recorded 1.18.33 database) holds no sessions or edits; the
// list says what it is instead, "database reindex of opencode.db (N
// files, SIZE)", and the JSON names the action, rule, files and bytes.
func TestListNamesADatabaseRun(t *testing.T) {
	state := t.TempDir()
	rs := realstore.Copy(t, ocrelease.V1_18)
	info := storetest.OpenOne(t, rs.Path).Info()
	var files int
	var bytesBefore int64
	for _, suf := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(rs.Path + suf); err == nil {
			files++
			bytesBefore += fi.Size()
		}
	}
	opts := backup.Options{Dir: state}
	run, err := backup.ApplyDatabase(context.Background(), opts, info, backup.DatabaseChange{
		Action: backup.ActionReindex, Rule: "SF501",
		Write:    func(ctx context.Context, path, _ string) error { return salvage.Reindex(ctx, path) },
		Activity: func() store.Activity { return store.Activity{State: store.ActivityNone} },
	})
	if err != nil {
		t.Fatal(err)
	}

	list := func(format string) string {
		ios, _, out, _ := iostreams.Test()
		f := cli.New(cli.BuildInfo{Version: "test"})
		f.IOStreams = ios
		f.Globals.Format = format
		if err := RunList(context.Background(), &BackupsOptions{Factory: f, Backup: opts}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}

	text := list("text")
	want := fmt.Sprintf(`(?m)^%s +\S+ \S+ +applied +database reindex of opencode\.db \(%d files?, [0-9.]+ (KiB|MiB)\) +sqlite %s$`,
		regexp.QuoteMeta(run), files, regexp.QuoteMeta(rs.Path))
	if !regexp.MustCompile(want).MatchString(text) || bytes.Contains([]byte(text), []byte("0 sessions")) {
		t.Errorf("text list:\n%s\nwant a line matching %s", text, want)
	}

	var runs []struct {
		Run      string              `json:"run"`
		Sessions int                 `json:"sessions"`
		Database *backup.RunDatabase `json:"database"`
		Store    map[string]any      `json:"store"`
	}
	if err := json.Unmarshal([]byte(list("json")), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Database == nil {
		t.Fatalf("json runs: %+v", runs)
	}
	if d := *runs[0].Database; d.Action != "reindex" || d.Rule != "SF501" || d.Files != files || d.Bytes != bytesBefore {
		t.Errorf("json database %+v, want reindex SF501 %d files %d bytes", d, files, bytesBefore)
	}
}
