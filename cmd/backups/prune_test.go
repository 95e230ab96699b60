package backups

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/backup"
)

var clock = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// journal makes a run folder for each age, with a manifest that names no
// session (List reads only the manifest), and returns the journal's dir.
func journal(t *testing.T, ages ...time.Duration) string {
	t.Helper()
	dir := t.TempDir()
	for i, age := range ages {
		at := clock.Add(-age)
		id := fmt.Sprintf("%s-run%03d", at.Format("20060102T150405Z"), i)
		run := filepath.Join(dir, "backups", id)
		if err := os.MkdirAll(run, 0o700); err != nil {
			t.Fatal(err)
		}
		m := fmt.Sprintf(`{"format": 2, "run": %q, "time": %q, "store": {"shape": "export", "path": "/s.json"}, "sessions": []}`, id, at.Format(time.RFC3339))
		if err := os.WriteFile(filepath.Join(run, "manifest.json"), []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runsLeft(t *testing.T, dir string) int {
	t.Helper()
	runs, err := backup.List(backup.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func pruneOptions(dir, age string, interactive bool, answer bool, asked *[]string) (*BackupsOptions, *bytes.Buffer) {
	ios, _, out, _ := iostreams.Test()
	f := cli.New(cli.BuildInfo{Version: "test"})
	f.IOStreams = ios
	f.Now = func() time.Time { return clock }
	f.Prompter = &cli.StubPrompter{Terminal: interactive, Answer: func(q string) (bool, error) {
		*asked = append(*asked, q)
		return answer, nil
	}}
	return &BackupsOptions{Factory: f, OlderThan: age, Backup: backup.Options{Dir: dir}}, out
}

// TestPruneAsksOnATerminal: prune lists the runs it would delete and asks;
// declined, nothing is deleted (exit 1); accepted, exactly the old runs go.
func TestPruneAsksOnATerminal(t *testing.T) {
	dir := journal(t, 40*24*time.Hour, 10*24*time.Hour, time.Hour)
	var asked []string
	opts, stdout := pruneOptions(dir, "7d", true, false, &asked)
	err := RunPrune(context.Background(), opts)
	if !errors.Is(err, cli.ErrFindings) {
		t.Fatalf("declined prune = %v, want ErrFindings (exit 1)", err)
	}
	if len(asked) != 1 || asked[0] != "delete 2 backup runs? they can no longer be undone" {
		t.Fatalf("asked %q", asked)
	}
	out := stdout.String()
	if strings.Count(out, "-run00") != 2 || !strings.Contains(out, "-run000") || !strings.Contains(out, "-run001") {
		t.Errorf("the list before the question names the wrong runs:\n%s", out)
	}
	if n := runsLeft(t, dir); n != 3 {
		t.Fatalf("declined prune left %d runs, want 3", n)
	}

	asked = nil
	opts, _ = pruneOptions(dir, "7d", true, true, &asked)
	if err := RunPrune(context.Background(), opts); err != nil {
		t.Fatalf("accepted prune: %v", err)
	}
	if n := runsLeft(t, dir); n != 1 || len(asked) != 1 {
		t.Fatalf("accepted prune left %d runs after %d questions, want 1 after 1", n, len(asked))
	}
}

// TestPruneRefusesAnAgeUnderADay: --older-than 0 is a usage error without
// --force, and deletes nothing; --dry-run deletes nothing either.
func TestPruneRefusesAnAgeUnderADay(t *testing.T) {
	dir := journal(t, 40*24*time.Hour, time.Minute)
	var asked []string
	for _, age := range []string{"0", "0s", "0d", "23h"} {
		opts, _ := pruneOptions(dir, age, true, true, &asked)
		opts.Yes = true
		var fe *cli.FlagError
		if err := RunPrune(context.Background(), opts); !errors.As(err, &fe) {
			t.Errorf("prune --older-than %s --yes = %v, want a usage error", age, err)
		}
	}
	opts, _ := pruneOptions(dir, "0", true, true, &asked)
	opts.DryRun = true
	if err := RunPrune(context.Background(), opts); err != nil {
		t.Fatalf("prune --dry-run: %v", err)
	}
	if n := runsLeft(t, dir); n != 2 || len(asked) != 0 {
		t.Fatalf("%d runs left and %d questions, want 2 and none", n, len(asked))
	}
	opts, _ = pruneOptions(dir, "0", true, true, &asked)
	opts.Force = true
	if err := RunPrune(context.Background(), opts); err != nil {
		t.Fatalf("prune --older-than 0 --force: %v", err)
	}
	if n := runsLeft(t, dir); n != 0 {
		t.Fatalf("prune --older-than 0 --force left %d runs", n)
	}
}

// TestPruneKeepsARunItCannotRead: an old run whose manifest sessfix cannot
// read is not deleted; prune says so and prints the command that deletes
// it by hand.
func TestPruneKeepsARunItCannotRead(t *testing.T) {
	dir := journal(t, 40*24*time.Hour)
	damaged := filepath.Join(dir, "backups", "20261001T120000Z-zzzzzz")
	if err := os.MkdirAll(damaged, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(damaged, "manifest.json"), []byte(`{"format": 99}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	opts, _ := pruneOptions(dir, "7d", false, false, &asked)
	opts.Yes = true
	if err := RunPrune(context.Background(), opts); err != nil {
		t.Fatalf("prune: %v", err)
	}
	if _, err := os.Stat(damaged); err != nil {
		t.Fatalf("prune deleted the run it cannot read: %v", err)
	}
	if n := runsLeft(t, dir); n != 1 {
		t.Fatalf("prune left %d runs, want only the unreadable one", n)
	}
	stderr := opts.Factory.IOStreams.ErrOut.(*bytes.Buffer).String()
	if !strings.Contains(stderr, "warning: kept backup run 20261001T120000Z-zzzzzz: its manifest cannot be read") ||
		!strings.Contains(stderr, "hint: if you do not need it, delete it by hand: rm -r "+damaged) {
		t.Errorf("prune does not say why it kept the run, or how to delete it:\n%s", stderr)
	}
}
