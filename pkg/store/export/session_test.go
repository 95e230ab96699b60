package export_test

import (
	"encoding/json"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// An export file holds one session: its info updates like any record,
// adding a session to it is refused (NewBody nil: the export writer adds a
// session only as a new file, for sessfix fork, and refuses an existing
// one), and so is deleting its session.
func TestExportWriterSessionContract(t *testing.T) {
	var dir string
	writertest.SessionContract(t, writertest.SessionCase{
		Session: writertest.Ses,
		Open: func(t *testing.T) (store.Store, store.Writer) {
			dir = t.TempDir()
			path := storetest.Materialize(t, store.ShapeExport, dir, &storetest.Fixture{
				ID: writertest.Ses, Info: json.RawMessage(`{"id":"` + writertest.Ses + `","title":"old title","time":{"created":1767225600000}}`),
				Messages: []storetest.Message{{ID: writertest.MsgA, Body: json.RawMessage(`{"role":"user","time":{"created":1767225601000}}`),
					Parts: []storetest.Part{{ID: writertest.Prt1, Body: json.RawMessage(`{"type":"text","text":"hi"}`)}}}},
			})
			st := storetest.OpenOne(t, path)
			w, err := shapes.OpenWriter(st.Info(), store.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() })
			return st, w
		},
		Snapshot: func(t *testing.T) string { return writertest.DirSnapshot(t, dir) },
	})
}
