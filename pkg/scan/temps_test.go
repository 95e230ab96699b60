package scan

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestRunNotesSessfixTemporaryFiles: a temporary file a killed sessfix left
// next to a record is reported as a note on its store, in every file
// shape, and is not a finding (a store sessfix never wrote has none, and a
// note never fails CI).
func TestRunNotesSessfixTemporaryFiles(t *testing.T) {
	const (
		sid = "ses_7ffffffffff0aaaaaaaaaaaaaa"
		mid = "msg_0000000000020000000000000b"
		pid = "prt_0000000000020000000000000c"
	)
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeProject, store.ShapeSessions, store.ShapeExport} {
		t.Run(string(shape), func(t *testing.T) {
			path := storetest.Materialize(t, shape, t.TempDir(), storetest.Sample()[0])
			clean := scanOne(t, path)
			if len(clean.Stores[0].Info.Notes) != 0 {
				t.Fatalf("notes on a store without leftovers: %v", clean.Stores[0].Info.Notes)
			}
			target := path
			if shape != store.ShapeExport {
				target = storetest.RecordPath(shape, path, sid, mid, pid)
			}
			temp := filepath.Join(filepath.Dir(target), ".sessfix-"+filepath.Base(target)+"-4242.tmp")
			if err := os.WriteFile(temp, []byte(`{"half":`), 0o644); err != nil {
				t.Fatal(err)
			}
			res := scanOne(t, path)
			notes := strings.Join(res.Stores[0].Info.Notes, "\n")
			if !strings.Contains(notes, "1 temporary file left by a sessfix that was killed") || !strings.Contains(notes, filepath.Base(temp)) {
				t.Errorf("notes = %q, want one naming %s", notes, temp)
			}
			if len(res.Findings) != len(clean.Findings) {
				t.Errorf("the temporary file changed the findings: %d, want %d", len(res.Findings), len(clean.Findings))
			}
		})
	}
}

func scanOne(t *testing.T, path string) *Result {
	t.Helper()
	st := storetest.OpenOne(t, path)
	defer st.Close()
	res, err := Run(context.Background(), []store.Store{st}, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}
