package fix

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// gnuPatch is the path of GNU patch, which the diff tests apply the dry
// run's diff with, as a user would. It is part of the machine's base
// system (Debian's patch package); a missing one fails the test with how
// to install it.
func gnuPatch(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("GNU patch is needed to apply the diffs: install it (apt-get install patch): %v", err)
	}
	out, err := exec.Command(p, "--version").Output()
	if err != nil || !bytes.Contains(out, []byte("GNU patch")) {
		t.Fatalf("%s is not GNU patch (%v): %s", p, err, out)
	}
	return p
}

// applyPatch applies a unified diff with `patch -p1` in dir, failing on
// any hunk that does not apply exactly (no fuzz, no offset accepted
// silently: a hunk at the wrong line makes patch say so).
func applyPatch(t *testing.T, patch, dir, diff string) {
	t.Helper()
	cmd := exec.Command(patch, "-p1", "--forward", "--batch", "--fuzz=0", "--no-backup-if-mismatch", "-d", dir)
	cmd.Stdin = strings.NewReader(diff)
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("offset")) || bytes.Contains(out, []byte("fuzz")) {
		t.Fatalf("patch: %v\n%s\ndiff:\n%s", err, out, diff)
	}
}

// copyTree copies a file or a directory tree.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if strings.HasSuffix(p, ".sessfix.lock") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// files lists every file under root (or root itself) with its bytes.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() && !strings.HasSuffix(p, ".sessfix.lock") {
			rel, _ := filepath.Rel(root, p)
			b, _ := os.ReadFile(p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok {
			diffs = append(diffs, "missing "+k)
		} else if g != v {
			diffs = append(diffs, "differs "+k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, "extra "+k)
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s: the patched copy is not what fix wrote:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// applyWithWriter writes cs as a backup run would (list, read, apply) and
// checks that what the writer planned is what it wrote.
func applyWithWriter(t *testing.T, info store.Info, cs *store.ChangeSet, now func() time.Time) {
	t.Helper()
	ctx := context.Background()
	w, err := shapes.OpenWriter(info, store.WriteOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	targets, err := w.Targets(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	before, err := w.Read(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	planned, err := w.Planned(ctx, cs, before)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Apply(ctx, cs); err != nil {
		t.Fatalf("apply: %v", err)
	}
	after, err := w.Read(ctx, targets)
	if err != nil {
		t.Fatal(err)
	}
	for i, t0 := range targets {
		if planned[i].Exists != after[i].Exists || !bytes.Equal(planned[i].Data, after[i].Data) {
			t.Errorf("%s: planned (exists %v, %d bytes) is not what Apply wrote (exists %v, %d bytes)",
				t0, planned[i].Exists, len(planned[i].Data), after[i].Exists, len(after[i].Data))
		}
		if planned[i].Spans != nil {
			back, err := store.Revert(after[i].Data, planned[i].Spans)
			if err != nil || !bytes.Equal(back, before[i].Data) {
				t.Errorf("%s: reverting the planned spans does not give the file back (%v)", t0, err)
			}
		}
	}
}

// relativeDiff is the diff of cs with its store named relative to the
// working directory, as `sessfix fix --dry-run --diff fo/a` names it: the
// test changes to the directory above the store's parent. The file names
// in the diff are relative to the store either way.
func relativeDiff(t *testing.T, cs *store.ChangeSet) string {
	t.Helper()
	abs := cs.Store.Path
	up := filepath.Dir(filepath.Dir(abs))
	rel, err := filepath.Rel(up, abs)
	if err != nil || filepath.IsAbs(rel) {
		t.Fatalf("no relative path to %s: %q %v", abs, rel, err)
	}
	t.Chdir(up)
	relCS := *cs
	relCS.Store.Path = rel
	var diff bytes.Buffer
	if err := Diff(&diff, &relCS); err != nil {
		t.Fatalf("diff through %s: %v", rel, err)
	}
	return diff.String()
}

// TestDiffIsWhatFixWrites: for every rule fixture in every shape, the dry
// run's diff of each session's plan, applied with GNU patch to a copy of
// the store, gives exactly the files fix writes (JSON records and export
// files), and for a database every record's data column as written
// (indented, as the diff shows it). The writers' plan (Planned) is what
// they then write. The store named by a relative path gives the same diff
// (its file names relative to the store, not bare file names).
func TestDiffIsWhatFixWrites(t *testing.T) {
	patch := gnuPatch(t)
	fixtureStores(t, func(t *testing.T, st store.Store, idle time.Duration) {
		info := st.Info()
		for _, s := range loadReadable(t, st) {
			opts := clockFor(s, idle)
			p, err := Plan(s, opts.check(s), opts)
			if err != nil {
				t.Fatal(err)
			}
			if p.Empty() {
				continue
			}
			var diff bytes.Buffer
			if err := Diff(&diff, p.Changes); err != nil {
				t.Fatalf("diff: %v", err)
			}
			if rel := relativeDiff(t, p.Changes); rel != diff.String() {
				t.Fatalf("the store named by a relative path gives another diff:\n%s\nwant:\n%s", rel, diff.String())
			}
			if info.Shape == store.ShapeSQLite {
				checkRowDiff(t, patch, info, p.Changes, diff.String(), opts.Now)
				continue
			}
			copyDir := t.TempDir()
			root := info.Path
			if info.Shape == store.ShapeExport {
				root = filepath.Dir(info.Path)
			}
			copyTree(t, root, copyDir)
			applyPatch(t, patch, copyDir, diff.String())
			applyWithWriter(t, info, p.Changes, opts.Now)
			sameFiles(t, s.ID, files(t, copyDir), files(t, root))
		}
	})
}

// checkRowDiff applies a database change set's diff to files holding each
// record's indented data column, and compares them with the rows written.
func checkRowDiff(t *testing.T, patch string, info store.Info, cs *store.ChangeSet, diff string, now func() time.Time) {
	t.Helper()
	dir := t.TempDir()
	name := func(table, id string) string { return filepath.Join(dir, filepath.Base(info.Path)+":"+table, id) }
	table := func(e store.Edit) string { return string(e.Kind) }
	for _, e := range cs.Edits {
		if e.Op == store.OpAdd {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(name(table(e), e.ID)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name(table(e), e.ID), indent(e.Before), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	applyPatch(t, patch, dir, diff)
	applyWithWriter(t, info, cs, now)
	st := storetest.OpenOne(t, info.Path)
	defer st.Close()
	rows := map[string][]byte{}
	for _, s := range storetest.LoadAll(t, st) {
		for _, m := range s.Messages {
			rows["message/"+m.ID] = m.Raw
			for _, p := range m.Parts {
				rows["part/"+p.ID] = p.Raw
			}
		}
	}
	for _, e := range cs.Edits {
		file, id := name(table(e), e.ID), e.ID
		if e.Op == store.OpRekey {
			// Removed under its old id, added under its new one.
			if _, err := os.Stat(file); err == nil {
				t.Errorf("rekey %s: the old id is still there after the patch", e.ID)
			}
			file, id = name(table(e), e.NewID), e.NewID
		}
		got, err := os.ReadFile(file)
		want, ok := rows[table(e)+"/"+id]
		switch {
		case e.Op == store.OpDelete || e.Op == store.OpQuarantine:
			if err == nil || ok {
				t.Errorf("%s %s: still there after the patch (%v) or in the database (%v)", e.Op, e.ID, err == nil, ok)
			}
		case err != nil || !ok:
			t.Errorf("%s %s: patched file %v, row found %v", e.Op, id, err, ok)
		case string(got) != string(indent(want)):
			t.Errorf("%s %s: the patched data column is not the row written:\n%s\nwant:\n%s", e.Op, id, got, indent(want))
		}
	}
}

// TestDiffOfALargeExportIsWhatFixWrites: in an export file of thousands of
// lines, edits far apart give hunks at the file's own line numbers (the
// diff is cut from the spans the writer changed, not from the whole file),
// and patch applies them to give the file fix writes.
func TestDiffOfALargeExportIsWhatFixWrites(t *testing.T) {
	patch := gnuPatch(t)
	dir := t.TempDir()
	path, _, err := storegen.Generate(store.ShapeExport, dir, storegen.Config{Sessions: 1, Messages: 400, Parts: 5, ToolOutput: 200, DefectRate: 0.05, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.OpenOne(t, path)
	sessions := storetest.LoadAll(t, st)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions in the export", len(sessions))
	}
	s := sessions[0]
	opts := clockFor(s, time.Hour)
	p, err := Plan(s, opts.check(s), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Edits) < 5 {
		t.Fatalf("only %d edits planned; the test needs edits far apart", len(p.Changes.Edits))
	}
	var diff bytes.Buffer
	if err := Diff(&diff, p.Changes); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(diff.String(), "\n@@ "); n < 3 {
		t.Errorf("%d hunks for %d edits far apart", n, len(p.Changes.Edits))
	}
	if strings.Count(diff.String(), "\\ No newline") > 1 {
		t.Errorf("\"No newline at end of file\" more than once:\n%s", diff.String())
	}
	copyDir := t.TempDir()
	copyTree(t, filepath.Dir(path), copyDir)
	applyPatch(t, patch, copyDir, diff.String())
	applyWithWriter(t, st.Info(), p.Changes, opts.Now)
	sameFiles(t, "export", files(t, copyDir), files(t, filepath.Dir(path)))
}
