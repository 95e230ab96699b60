package fix

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

func TestDiffShowsEveryEdit(t *testing.T) {
	b, a := killedAtTextStart(t, store.ShapeSessions)
	b.s.Store.Path = "/store"
	a.Parts[2].Loc = store.Location{Path: "/store/sessions/" + sesID + "/parts/" + msgA1 + "/" + prt4 + ".json"}
	rep, _ := replaceEmptyTextParts(b.s, a, DefaultPlaceholder)
	inj, _ := injectTextPart(b.s, a, "more", testEnv())
	del, _ := stripThinkingParts(b.s, a, nil)
	cs := &store.ChangeSet{Store: b.s.Store, Edits: append(append(rep, inj...), del...)}
	var out bytes.Buffer
	if err := Diff(&out, cs); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"--- a/sessions/" + sesID + "/parts/" + msgA1 + "/" + prt4 + ".json\n",
		"-  \"text\": \"\",\n+  \"text\": \"[user interrupted]\",\n",
		"+  \"synthetic\": true\n",
		"--- /dev/null\n+++ b/part/" + msgA1 + "/" + inj[0].ID + "\n",
		"+  \"text\": \"more\",\n",
		"+++ /dev/null\n",
		"-  \"text\": \"let me think\",\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("diff lacks %q:\n%s", want, got)
		}
	}
}

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
