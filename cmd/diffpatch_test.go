package cmd

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// patchExe is GNU patch, which a user applies the printed diffs with. It
// is part of the machine's base system; a missing one fails the test with
// how to install it.
func patchExe(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("GNU patch is needed to apply the diffs: install it (apt-get install patch): %v", err)
	}
	return p
}

// patchIn applies diff with `patch -p1` in dir, refusing fuzz and offsets.
func patchIn(t *testing.T, dir, diff string) {
	t.Helper()
	cmd := exec.Command(patchExe(t), "-p1", "--forward", "--batch", "--fuzz=0", "--no-backup-if-mismatch", "-d", dir)
	cmd.Stdin = strings.NewReader(diff)
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("offset")) || bytes.Contains(out, []byte("fuzz")) {
		t.Fatalf("patch -p1 in %s: %v\n%s\ndiff:\n%s", dir, err, out, diff)
	}
}

// treeFiles is every file under root (root itself when it is a file),
// by path relative to root, without sessfix's lock.
func treeFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".sessfix.lock") {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyTreeTo(t *testing.T, from, to string) {
	t.Helper()
	for rel, data := range treeFiles(t, from) {
		p := filepath.Join(to, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// diffCommand is one command that prints a diff with --dry-run --diff and
// writes the same change with --yes.
type diffCommand struct {
	name string
	args func(store string) []string
}

// TestPrintedDiffsApply runs `fix` and `drop` as a user does, with the
// store named by a relative and by an absolute path, in every shape: the
// diff `--dry-run --diff` prints applies with `patch -p1` in a copy of the
// store (the directory the plan names; an export file's directory) and
// gives exactly the files `--yes` then writes. A database's diff is of
// its records' data columns, indented, labelled opencode.db:<table>/<id>:
// applied to files holding those columns as they were, it gives the rows
// written.
func TestPrintedDiffsApply(t *testing.T) {
	t.Setenv("SESSFIX_STATE_DIR", t.TempDir())
	fixtures, err := filepath.Abs("../testdata/sessions")
	if err != nil {
		t.Fatal(err)
	}
	// One clock for the dry run and the write: what they stamp (an
	// aborted message's completion time) is the same.
	now := time.Now().Add(24 * time.Hour)
	clock := func(f *cli.Factory, _ *iostreams.IOStreams) { f.Now = func() time.Time { return now } }
	at := time.Now().Add(-time.Hour)
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSessions, store.ShapeProject, store.ShapeExport, store.ShapeSQLite} {
		for _, relative := range []bool{false, true} {
			cases := []string{"sf202-invalid-id", "sf205-foreign-parts", "preflight-blank-text"}
			if shape == store.ShapeExport {
				cases = cases[:1] // one session a file
			}
			path := storetest.MaterializeCases(t, shape, fixtures, at, cases...)
			st := storetest.OpenOne(t, path)
			info := st.Info()
			sessions := storetest.LoadAll(t, st)
			st.Close()
			last := sessions[0].Messages[len(sessions[0].Messages)-1].ID
			cmds := []diffCommand{
				{"fix", func(p string) []string { return []string{"fix", p} }},
				{"drop", func(p string) []string { return []string{"drop", sessions[0].ID, last, "--store", p} }},
			}
			for _, c := range cmds {
				name := string(shape) + "/" + c.name
				named := path
				if relative {
					name += "/relative"
					t.Chdir(filepath.Dir(filepath.Dir(path)))
					named = filepath.Join(filepath.Base(filepath.Dir(path)), filepath.Base(path))
				}
				dry := run(t, clock, append(c.args(named), "--dry-run", "--diff")...)
				if dry.code != ExitFindings || !strings.Contains(dry.stdout, "diff ") && !strings.Contains(dry.stdout, "--- ") {
					t.Fatalf("%s: dry run exits %d:\n%s\n%s", name, dry.code, dry.stdout, dry.stderr)
				}
				if shape == store.ShapeSQLite {
					checkRecordDiff(t, name, info.Path, dry.stdout, func() {
						if r := run(t, clock, append(c.args(named), "--yes")...); r.code != ExitOK && r.code != ExitFindings {
							t.Fatalf("%s --yes exits %d:\n%s", name, r.code, r.stderr)
						}
					})
					continue
				}
				root := info.Path
				if shape == store.ShapeExport {
					root = filepath.Dir(info.Path)
				}
				patched := t.TempDir()
				copyTreeTo(t, root, patched)
				patchIn(t, patched, dry.stdout)
				if r := run(t, clock, append(c.args(named), "--yes")...); r.code != ExitOK && r.code != ExitFindings {
					t.Fatalf("%s --yes exits %d:\n%s", name, r.code, r.stderr)
				}
				got, want := treeFiles(t, patched), treeFiles(t, root)
				for f, data := range want {
					if got[f] != data {
						t.Errorf("%s: %s after the patch is not what --yes wrote", name, f)
					}
				}
				for f := range got {
					if _, ok := want[f]; !ok {
						t.Errorf("%s: the patch leaves %s, which --yes removed", name, f)
					}
				}
			}
		}
	}
}

var recordLabel = regexp.MustCompile(`(?m)^(---|\+\+\+) (?:a/|b/)([^:\s]+):(\w+)/(\S+)$`)

// checkRecordDiff applies a database's record diff to files holding each
// named record's data column (indented) as it is before write runs, and
// compares them with the rows after.
func checkRecordDiff(t *testing.T, name, db, diff string, write func()) {
	t.Helper()
	dir := t.TempDir()
	labels := recordLabel.FindAllStringSubmatch(diff, -1)
	if len(labels) == 0 {
		t.Fatalf("%s: no record labels in the diff:\n%s", name, diff)
	}
	for _, l := range labels {
		if l[1] != "---" {
			continue
		}
		data, ok := rowData(t, db, l[3], l[4])
		if !ok {
			t.Fatalf("%s: the diff removes %s/%s, which the database lacks", name, l[3], l[4])
		}
		p := filepath.Join(dir, l[2]+":"+l[3], l[4])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, indented(t, data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patchIn(t, dir, diff)
	write()
	for _, l := range labels {
		p := filepath.Join(dir, l[2]+":"+l[3], l[4])
		got, ferr := os.ReadFile(p)
		data, ok := rowData(t, db, l[3], l[4])
		switch {
		case ferr != nil && ok:
			t.Errorf("%s: the patch removes %s/%s, which --yes kept", name, l[3], l[4])
		case ferr == nil && !ok:
			t.Errorf("%s: the patch leaves %s/%s, which --yes removed", name, l[3], l[4])
		case ok && string(got) != string(indented(t, data)):
			t.Errorf("%s: %s/%s after the patch:\n%s\nwritten:\n%s", name, l[3], l[4], got, indented(t, data))
		}
	}
}

func rowData(t *testing.T, db, table, id string) ([]byte, bool) {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var data []byte
	err = conn.QueryRow("SELECT data FROM "+table+" WHERE id = ?", id).Scan(&data)
	if err == sql.ErrNoRows {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return data, true
}

func indented(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}
