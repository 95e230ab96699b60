package shapes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// semantic decodes a JSON object and drops the id keys, so bodies written
// with ids (JSON shapes) and without (SQLite) compare equal to the fixture.
func semantic(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	delete(m, "id")
	delete(m, "sessionID")
	delete(m, "messageID")
	return m
}

func checkRecord(t *testing.T, shape store.Shape, root string, rec *store.Record, table, wantPath string, body json.RawMessage) {
	t.Helper()
	if rec.Err != nil {
		t.Fatalf("%s %s: unexpected error %v", rec.Kind, rec.ID, rec.Err)
	}
	if !reflect.DeepEqual(semantic(t, rec.Raw), semantic(t, body)) {
		t.Errorf("%s %s: body %s, want %s", rec.Kind, rec.ID, rec.Raw, body)
	}
	switch shape {
	case store.ShapeSQLite:
		if rec.Loc.Path != root || rec.Loc.Table != table || rec.Loc.RowID <= 0 {
			t.Errorf("%s %s: location %+v, want %s:%s/<rowid>", rec.Kind, rec.ID, rec.Loc, root, table)
		}
		if rec.Get("id").Exists() {
			t.Errorf("%s %s: sqlite data column carries an id: %s", rec.Kind, rec.ID, rec.Raw)
		}
	case store.ShapeExport:
		file, err := os.ReadFile(root)
		if err != nil {
			t.Fatal(err)
		}
		off := bytes.Index(file, rec.Raw)
		if off < 0 || rec.Raw[0] != '{' {
			t.Fatalf("%s %s: raw %q is not a slice of the export file", rec.Kind, rec.ID, rec.Raw)
		}
		if line := bytes.Count(file[:off], []byte("\n")) + 1; rec.Loc.Line != line || rec.Loc.Path != root {
			t.Errorf("%s %s: location %v, want %s:%d", rec.Kind, rec.ID, rec.Loc, root, line)
		}
	default:
		if rec.Loc.Path != wantPath || rec.Loc.Line != 1 {
			t.Errorf("%s %s: location %v, want %s:1", rec.Kind, rec.ID, rec.Loc, wantPath)
		}
		file, err := os.ReadFile(wantPath)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(file, rec.Raw) {
			t.Errorf("%s %s: raw differs from the file:\n%s\nfile:\n%s", rec.Kind, rec.ID, rec.Raw, file)
		}
		if !bytes.HasPrefix(file, []byte("{\n  \"")) {
			t.Errorf("%s: not written as pretty 2-space JSON: %q", wantPath, file)
		}
	}
	if rec.Modified.IsZero() {
		t.Errorf("%s %s: no modification time", rec.Kind, rec.ID)
	}
}

func TestRoundTripEveryShape(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			fixtures := storetest.Sample()
			if shape == store.ShapeExport {
				fixtures = fixtures[:1]
			}
			path := storetest.Materialize(t, shape, t.TempDir(), fixtures...)
			st := storetest.OpenOne(t, path)
			if got := st.Info(); got.Shape != shape || got.Path != path {
				t.Fatalf("info %+v, want shape %s at %s", got, shape, path)
			}
			ctx := context.Background()
			refs, err := st.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(refs) != len(fixtures) {
				t.Fatalf("listed %d sessions, want %d: %+v", len(refs), len(fixtures), refs)
			}
			// Fixture ids are chosen so id order is the fixture order reversed.
			for i, ref := range refs {
				f := fixtures[len(fixtures)-1-i]
				if ref.ID != f.ID || ref.Title != f.Title {
					t.Errorf("ref %d = %q %q, want %q %q", i, ref.ID, ref.Title, f.ID, f.Title)
				}
				s, err := st.Load(ctx, ref)
				if err != nil {
					t.Fatal(err)
				}
				if len(s.Broken) != 0 || len(s.Orphans) != 0 || s.InfoMissing {
					t.Fatalf("session %s: broken %v orphans %v infoMissing %v", s.ID, s.Broken, s.Orphans, s.InfoMissing)
				}
				if s.ID != f.ID || s.Title != f.Title || s.Info == nil || s.Store.Path != path {
					t.Errorf("session %q title %q info %v store %v", s.ID, s.Title, s.Info, s.Store)
				}
				if len(s.Messages) != len(f.Messages) {
					t.Fatalf("session %s: %d messages, want %d", s.ID, len(s.Messages), len(f.Messages))
				}
				for j, m := range s.Messages {
					fm := f.Messages[j]
					wantID := fixtureID(fm.ID, fm.Body)
					if m.ID != wantID || m.SessionID != f.ID {
						t.Errorf("message %d = %s in %s, want %s in %s", j, m.ID, m.SessionID, wantID, f.ID)
					}
					if m.Role == "" || m.Created == 0 {
						t.Errorf("message %s: role %q created %d", m.ID, m.Role, m.Created)
					}
					checkRecord(t, shape, path, &m.Record, "message", storetest.RecordPath(shape, path, f.ID, m.ID, ""), fm.Body)
					if len(m.Parts) != len(fm.Parts) {
						t.Fatalf("message %s: %d parts, want %d", m.ID, len(m.Parts), len(fm.Parts))
					}
					for k, p := range m.Parts {
						fp := fm.Parts[k]
						want := fixtureID(fp.ID, fp.Body)
						if p.ID != want || p.MessageID != m.ID || p.SessionID != f.ID || p.Type == "" {
							t.Errorf("part %d = %s in %s/%s type %q, want %s in %s/%s", k, p.ID, p.SessionID, p.MessageID, p.Type, want, f.ID, m.ID)
						}
						checkRecord(t, shape, path, &p.Record, "part", storetest.RecordPath(shape, path, f.ID, m.ID, p.ID), fp.Body)
					}
				}
			}
		})
	}
}

func idOf(body []byte) string {
	var v struct{ ID string }
	json.Unmarshal(body, &v)
	return v.ID
}

// fixtureID is the id a fixture record is written under: its ID, or else
// its body's "id".
func fixtureID(id string, body []byte) string {
	if id != "" {
		return id
	}
	return idOf(body)
}

// TestConcurrentLoad loads the same sessions from many goroutines; run
// with -race it checks that Load is safe for concurrent use.
func TestConcurrentLoad(t *testing.T) {
	for _, shape := range storetest.Shapes {
		t.Run(string(shape), func(t *testing.T) {
			fixtures := storetest.Sample()
			if shape == store.ShapeExport {
				fixtures = fixtures[:1]
			}
			st := storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), fixtures...))
			refs, err := st.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			errs := make(chan error, 8*len(refs))
			for range 8 {
				for _, ref := range refs {
					go func() {
						s, err := st.Load(context.Background(), ref)
						if err == nil && s.ID != ref.ID {
							err = fmt.Errorf("loaded %s for %s", s.ID, ref.ID)
						}
						errs <- err
					}()
				}
			}
			for range 8 * len(refs) {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestLoadExportFixtureRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := storetest.Materialize(t, store.ShapeExport, dir, storetest.Sample()[0])
	f, err := storetest.LoadExportFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	want := storetest.Sample()[0]
	if f.ID != want.ID || f.Title != want.Title || len(f.Messages) != len(want.Messages) {
		t.Fatalf("fixture %s %q with %d messages, want %s %q with %d", f.ID, f.Title, len(f.Messages), want.ID, want.Title, len(want.Messages))
	}
	for i, m := range f.Messages {
		if m.ID != fixtureID(want.Messages[i].ID, want.Messages[i].Body) || len(m.Parts) != len(want.Messages[i].Parts) {
			t.Errorf("message %d: %s with %d parts", i, m.ID, len(m.Parts))
		}
		if !reflect.DeepEqual(semantic(t, m.Body), semantic(t, want.Messages[i].Body)) {
			t.Errorf("message %d body %s", i, m.Body)
		}
	}
	// The loaded fixture materialises into another shape unchanged.
	st := storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSessions, dir, f))
	s, err := st.Load(context.Background(), store.SessionRef{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	if s.PartCount() != 4 || s.Messages[1].Parts[1].Type != "reasoning" {
		t.Errorf("re-materialised session has %d parts, second message %v", s.PartCount(), s.Messages[1].Parts)
	}
	if _, err := storetest.LoadExportFixture(filepath.Join(dir, "sessions", f.ID, "messages", f.Messages[0].ID+".json")); err == nil {
		t.Error("a message file loaded as an export fixture")
	}
}
