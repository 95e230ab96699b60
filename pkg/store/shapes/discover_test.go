package shapes_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// found returns "shape:path" for each store found.
func found(d *shapes.Discovery) string {
	var out []string
	for _, s := range d.Stores {
		out = append(out, string(s.Info().Shape)+":"+s.Info().Path)
	}
	return strings.Join(out, " ")
}

func discover(t *testing.T, env shapes.Env) *shapes.Discovery {
	t.Helper()
	d, err := shapes.Discover(env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDiscoverDatabaseWinsOverStaleStorage(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "opencode")
	f := storetest.Sample()
	db := storetest.Materialize(t, store.ShapeSQLite, data, f...)
	storage := storetest.Materialize(t, store.ShapeStorage, data, f...)
	storetest.Materialize(t, store.ShapeProject, data, f...)

	d := discover(t, shapes.Env{Home: home})
	if got := found(d); got != "sqlite:"+db {
		t.Fatalf("stores %s, want only the database", got)
	}
	notes := strings.Join(d.Notes, "\n")
	if !strings.Contains(notes, storage+" is a pre-migration copy of the database") || !strings.Contains(notes, "name it explicitly") {
		t.Errorf("notes %q do not explain the skipped storage/ tree", notes)
	}
	if !strings.Contains(notes, filepath.Join(data, "project")) {
		t.Errorf("notes %q do not explain the skipped project trees", notes)
	}
	// Named explicitly, the stale copy is scanned.
	if st := storetest.OpenOne(t, storage); st.Info().Shape != store.ShapeStorage {
		t.Errorf("explicit storage/ opened as %s", st.Info().Shape)
	}
}

func TestDiscoverXDGAndChannelDatabases(t *testing.T) {
	xdg := t.TempDir()
	data := filepath.Join(xdg, "opencode")
	db := storetest.Materialize(t, store.ShapeSQLite, data, storetest.Sample()...)
	beta := filepath.Join(data, "opencode-beta.db")
	must(t, os.Rename(storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), storetest.Sample()[1]), beta))

	d := discover(t, shapes.Env{Home: t.TempDir(), XDGDataHome: xdg})
	if got, want := found(d), "sqlite:"+db+" sqlite:"+beta; got != want {
		t.Fatalf("stores %s, want %s", got, want)
	}
}

func TestDiscoverEmptyXDGCountsAsUnset(t *testing.T) {
	home := t.TempDir()
	storage := storetest.Materialize(t, store.ShapeStorage, filepath.Join(home, ".local", "share", "opencode"), storetest.Sample()...)
	d := discover(t, shapes.Env{Home: home, XDGDataHome: ""})
	if got := found(d); got != "storage:"+storage {
		t.Fatalf("stores %s", got)
	}
}

func TestDiscoverOpencodeDB(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "opencode")
	storetest.Materialize(t, store.ShapeSQLite, data, storetest.Sample()...) // opencode.db: not used when OPENCODE_DB is set

	rel := filepath.Join(data, "custom", "mine.db")
	must(t, os.MkdirAll(filepath.Dir(rel), 0o755))
	must(t, os.Rename(storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), storetest.Sample()[1]), rel))
	d := discover(t, shapes.Env{Home: home, OpencodeDB: filepath.Join("custom", "mine.db")})
	if got := found(d); got != "sqlite:"+rel {
		t.Errorf("relative OPENCODE_DB: stores %s, want %s", got, rel)
	}

	abs := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), storetest.Sample()[1])
	d = discover(t, shapes.Env{Home: home, OpencodeDB: abs})
	if got := found(d); got != "sqlite:"+abs {
		t.Errorf("absolute OPENCODE_DB: stores %s, want %s", got, abs)
	}
}

func TestDiscoverHomeSessions(t *testing.T) {
	home := t.TempDir()
	sessions := storetest.Materialize(t, store.ShapeSessions, filepath.Join(home, ".opencode"), storetest.Sample()...)
	d := discover(t, shapes.Env{Home: home})
	if got := found(d); got != "sessions:"+sessions {
		t.Fatalf("stores %s", got)
	}
}

func TestDiscoverNothingListsWhereItLooked(t *testing.T) {
	home := t.TempDir()
	_, err := shapes.Discover(shapes.Env{Home: home})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("err %v, want ErrNotFound", err)
	}
	data := filepath.Join(home, ".local", "share", "opencode")
	for _, p := range []string{filepath.Join(data, "opencode.db"), filepath.Join(data, "storage"), filepath.Join(data, "project"), filepath.Join(home, ".opencode", "sessions")} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not name %s", err, p)
		}
	}
	// each place once, also the database two shapes check
	db := filepath.Join(t.TempDir(), "x.db")
	for _, env := range []shapes.Env{{Home: home}, {Home: home, OpencodeDB: db}} {
		_, err := shapes.Discover(env)
		_, looked, _ := strings.Cut(err.Error(), "looked in ")
		seen := map[string]bool{}
		for _, p := range strings.Split(strings.TrimSuffix(looked, ")"), ", ") {
			if seen[p] {
				t.Errorf("error %q names %s twice", err, p)
			}
			seen[p] = true
		}
	}
	if _, err := shapes.Discover(shapes.Env{}); err == nil || !strings.Contains(err.Error(), "HOME") {
		t.Errorf("no HOME: %v", err)
	}
}

// An OpenCode 2 database is its shape's store, in a data dir and named;
// the data dir's other stores are notes, and a 1.x database next to it
// is read when it is named.
func TestDiscoverOpenCode2Database(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "opencode")
	db := filepath.Join(data, "opencode.db")
	must(t, os.MkdirAll(data, 0o755))
	copyFile(t, filepath.Join("..", "..", "..", "testdata", "opencode2", "after-import", "opencode.db"), db)
	storage := storetest.Materialize(t, store.ShapeStorage, data, storetest.Sample()...)
	beta := filepath.Join(data, "opencode-beta.db")
	must(t, os.Rename(storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), storetest.Sample()[1]), beta))

	d := discover(t, shapes.Env{Home: home})
	if got := found(d); got != "sqlite2:"+db {
		t.Fatalf("stores %s, want only the OpenCode 2 database", got)
	}
	notes := strings.Join(d.Notes, "\n")
	for _, want := range []string{storage + " is a pre-migration copy", beta + ": OpenCode 1.x databases next to the OpenCode 2 database"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q do not say %q", notes, want)
		}
	}
	if strings.Contains(notes, db) {
		t.Errorf("notes %q name the OpenCode 2 database as a skipped 1.x one", notes)
	}
	for path, want := range map[string]string{data: "sqlite2:" + db, db: "sqlite2:" + db, beta: "sqlite:" + beta} {
		d, err := shapes.Open([]string{path})
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		if got := found(d); got != want {
			t.Errorf("open %s: %s, want %s", path, got, want)
		}
		d.Close()
	}
	// Its writer refuses, and the registry says so before anything opens.
	info := store.Info{Shape: store.ShapeSQLite2, Path: db}
	var ro *store.ReadOnlyError
	if _, err := shapes.OpenWriter(info, store.WriteOptions{}); !errors.As(err, &ro) || !errors.Is(err, store.ErrUnsupported) {
		t.Errorf("open the writer: %v, want a *store.ReadOnlyError", err)
	}
	if err := shapes.CheckWritable(info); !errors.As(err, &ro) {
		t.Errorf("CheckWritable: %v, want a *store.ReadOnlyError", err)
	}
	if err := shapes.CheckWritable(store.Info{Shape: store.ShapeSQLite, Path: beta}); err != nil {
		t.Errorf("CheckWritable of a 1.x database: %v", err)
	}
}

func TestOpenDetectsEveryShapeByContent(t *testing.T) {
	data := t.TempDir()
	f := storetest.Sample()
	db := storetest.Materialize(t, store.ShapeSQLite, data, f...)
	storage := storetest.Materialize(t, store.ShapeStorage, data, f...)
	project := storetest.Materialize(t, store.ShapeProject, data, f...)
	sessions := storetest.Materialize(t, store.ShapeSessions, data, f...)
	export := storetest.Materialize(t, store.ShapeExport, data, f[0])

	// Names carry no meaning: a database and an export file renamed.
	dbCopy := filepath.Join(t.TempDir(), "backup.bin")
	copyFile(t, db, dbCopy)
	exportCopy := filepath.Join(t.TempDir(), "session.txt")
	copyFile(t, export, exportCopy)

	cases := []struct{ path, want string }{
		{db, "sqlite:" + db},
		{dbCopy, "sqlite:" + dbCopy},
		{storage, "storage:" + storage},
		{project, "project:" + project},
		{filepath.Dir(project), "project:" + project},               // the project tree
		{filepath.Dir(filepath.Dir(project)), "project:" + project}, // <data>/project
		{sessions, "sessions:" + sessions},
		{export, "export:" + export},
		{exportCopy, "export:" + exportCopy},
		{data, "sqlite:" + db}, // a data dir: the database wins
	}
	for _, c := range cases {
		d, err := shapes.Open([]string{c.path})
		if err != nil {
			t.Errorf("open %s: %v", c.path, err)
			continue
		}
		if got := found(d); got != c.want {
			t.Errorf("open %s: %s, want %s", c.path, got, c.want)
		}
		d.Close()
	}

	// A sessions root (the parent of sessions/) alone.
	root := t.TempDir()
	s2 := storetest.Materialize(t, store.ShapeSessions, root, f...)
	if st := storetest.OpenOne(t, root); st.Info().Path != s2 {
		t.Errorf("sessions root opened as %v", st.Info())
	}

	// A root that is itself named "sessions" (…/sessions/sessions/<id>):
	// the sessions/ inside it holds the sessions, not the root.
	named := filepath.Join(t.TempDir(), "sessions")
	s3 := storetest.Materialize(t, store.ShapeSessions, named, f...)
	if s3 != filepath.Join(named, "sessions") {
		t.Fatalf("fixture at %s, want %s/sessions", s3, named)
	}
	if st := storetest.OpenOne(t, named); st.Info().Path != s3 {
		t.Errorf("root named sessions opened as %v, want %s", st.Info(), s3)
	}
	// An empty sessions/ dir is still a (new, empty) sessions store.
	empty := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if st := storetest.OpenOne(t, empty); st.Info().Path != empty || st.Info().Shape != store.ShapeSessions {
		t.Errorf("empty sessions dir opened as %v", st.Info())
	}
}

func TestOpenRejectsWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.json")
	must(t, os.WriteFile(text, []byte(`{"info": {}, "messages": "no"}`), 0o644))
	empty := filepath.Join(dir, "empty")
	must(t, os.Mkdir(empty, 0o755))
	for _, p := range []string{filepath.Join(dir, "missing"), text, empty} {
		_, err := shapes.Open([]string{p})
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "expected") && !strings.Contains(err.Error(), "export file") {
			t.Errorf("open %s: %v, want ErrNotFound naming it and what was expected", p, err)
		}
	}
	// One bad path does not stop the others: it is a failure of its own.
	good := storetest.Materialize(t, store.ShapeSessions, t.TempDir(), storetest.Sample()...)
	d, err := shapes.Open([]string{empty, good, text})
	if err != nil {
		t.Fatalf("open with one good path: %v", err)
	}
	defer d.Close()
	if len(d.Stores) != 1 || d.Stores[0].Info().Path != good {
		t.Errorf("stores %v, want the one at %s", d.Stores, good)
	}
	if len(d.Failed) != 2 || d.Failed[0].Path != empty || d.Failed[1].Path != text || !errors.Is(d.FailedErr(), store.ErrNotFound) {
		t.Errorf("failed %v, want %s then %s, not found", d.Failed, empty, text)
	}
	// When no path can be opened, the error names each.
	_, err = shapes.Open([]string{empty, text})
	if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), text) {
		t.Errorf("open of two bad paths: %v, want an error naming both", err)
	}
}

// What a path that is not a store is called: what it is, without the
// parser's or the driver's words for it, and never twice.
func TestWhatAPathIsNot(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "opencode.db")
	must(t, os.WriteFile(text, []byte("not a database\n"), 0o644))
	empty := filepath.Join(t.TempDir(), "opencode.db")
	must(t, os.WriteFile(empty, nil, 0o644))
	for _, tt := range []struct{ path, want string }{
		{text, text + ` is not an sqlite database, and not an export file (a JSON object with "info" and "messages")`},
		{empty, empty + " is an empty file (0 bytes) (expected an opencode data dir"},
		{filepath.Dir(text), filepath.Dir(text) + " holds no readable opencode store: " + text + " is not an sqlite database"},
		{filepath.Dir(empty), filepath.Dir(empty) + " holds no readable opencode store: " + empty + " is an empty file (0 bytes), not an opencode database"},
	} {
		_, err := shapes.Open([]string{tt.path})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, store.ErrNotFound) {
			t.Errorf("open %s: %v\nwant it to start %q", tt.path, err, tt.want)
		}
		if err != nil && strings.Count(err.Error(), store.ErrNotFound.Error()) > 0 {
			t.Errorf("open %s: %v: says %q", tt.path, err, store.ErrNotFound)
		}
	}
	// $OPENCODE_DB is named when it is what sessfix looked at.
	data := t.TempDir()
	_, err := shapes.Discover(shapes.Env{Home: t.TempDir(), XDGDataHome: data, OpencodeDB: text})
	if err == nil || !strings.Contains(err.Error(), text+" (from $OPENCODE_DB)") || !strings.Contains(err.Error(), "$OPENCODE_DB: "+text+" is not an sqlite database") {
		t.Errorf("discover with $OPENCODE_DB naming a text file: %v", err)
	}
	_, err = shapes.Discover(shapes.Env{Home: t.TempDir(), XDGDataHome: data, OpencodeDB: "gone.db"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(data, "opencode", "gone.db")+" (from $OPENCODE_DB)") {
		t.Errorf("discover with $OPENCODE_DB naming nothing: %v", err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(dst, b, 0o644))
}
