package fix

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

func TestDiffSQLiteIndentsDataColumns(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSQLite)
	b.s.Store.Path = "/data/opencode.db"
	a.Parts[2].Loc = store.Location{Path: "/data/opencode.db", Table: "part", RowID: 7}
	rep, _ := replaceEmptyTextParts(b.s, a, DefaultPlaceholder)
	var out bytes.Buffer
	if err := Diff(&out, &store.ChangeSet{Store: b.s.Store, Edits: rep}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "--- a/opencode.db:part/"+prt4) || !strings.Contains(got, "data column shown indented") ||
		!strings.Contains(got, "+  \"text\": \"[user interrupted]\",\n") {
		t.Errorf("sqlite diff:\n%s", got)
	}
}
