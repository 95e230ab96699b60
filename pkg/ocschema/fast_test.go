package ocschema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

// corpus is every record body in testdata: the JSON files as stored (keys
// in OpenCode's order), the recorded databases' rows (keys sorted), and
// this package's examples.
func corpus(t testing.TB) [][]byte {
	t.Helper()
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	err = filepath.WalkDir(filepath.Join(root, "testdata"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if len(b) < 1<<16 && gjson.ValidBytes(b) && gjson.ParseBytes(b).IsObject() {
			out = append(out, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "testdata", "real", "opencode-*"))
	for _, dir := range dirs {
		ids, err := opencodetest.Sessions(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			msgs, err := opencodetest.LoadSession(dir, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				b, _ := json.Marshal(m.Data)
				out = append(out, b)
				for _, p := range m.Parts {
					b, _ := json.Marshal(p.Data)
					out = append(out, b)
				}
			}
		}
	}
	for _, s := range []string{userMsg, asstMsg, toolDone, stepEnd} {
		out = append(out, []byte(s))
	}
	return out
}

// mutations are variants of body: each key (at any depth, array items
// included) removed or given a value of each JSON type, and some values
// OpenCode's schema treats specially.
func mutations(body []byte) [][]byte {
	values := []string{`null`, `"x"`, `"msg_x"`, `1.5`, `-1`, `7`, `2e3`, `true`, `{}`, `[]`, `[1]`, `{"a":"b"}`, `"\u0074ool"`}
	var paths []string
	var walk func(v gjson.Result, path string, depth int)
	walk = func(v gjson.Result, path string, depth int) {
		if depth > 4 {
			return
		}
		v.ForEach(func(k, item gjson.Result) bool {
			key := k.String()
			if k.Type != gjson.String {
				key = k.Raw
			}
			if strings.ContainsAny(key, `.*?|#@\!=<>%`) {
				return true
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			paths = append(paths, p)
			walk(item, p, depth+1)
			return true
		})
	}
	walk(gjson.ParseBytes(body), "", 0)
	var out [][]byte
	for _, p := range paths {
		if b, err := sjson.DeleteBytes(body, p); err == nil {
			out = append(out, b)
		}
		for _, v := range values {
			if b, err := sjson.SetRawBytes(body, p, []byte(v)); err == nil {
				out = append(out, b)
			}
		}
	}
	return out
}

// onlyIDs reports whether every problem is at a top-level id, which Fits
// leaves out.
func onlyIDs(ps []ocschema.Problem) bool {
	for _, p := range ps {
		if p.Path != "id" && p.Path != "sessionID" && p.Path != "messageID" {
			return false
		}
	}
	return true
}

// TestFastPathAgrees checks the fast path against the full check on every
// record in testdata and thousands of variants of each: it says a record
// fits exactly when the full check finds nothing (Fits: nothing but ids).
func TestFastPathAgrees(t *testing.T) {
	var bodies, fit, fitIDs int
	// Every record as it is; variants of two records of each kind (role,
	// type, tool status), which keeps the test to seconds.
	kinds := map[string]int{}
	for _, body := range corpus(t) {
		all := [][]byte{body}
		kind := gjson.GetBytes(body, "role").String() + "/" + gjson.GetBytes(body, "type").String() + "/" + gjson.GetBytes(body, "state.status").String()
		if kinds[kind]++; kinds[kind] <= 2 {
			all = append(all, mutations(body)...)
		}
		for _, b := range all {
			if !gjson.ValidBytes(b) {
				continue
			}
			// An escaped discriminator sends the record to the full check
			// (the fast path compares strings as stored): only the fast
			// path's yes must be right.
			sure := !bytes.Contains(b, []byte(`\u0074`))
			for _, r := range []ocschema.Record{ocschema.MessageRecord, ocschema.PartRecord} {
				bodies++
				ps := ocschema.FullCheck(r, b, ocschema.IDs{})
				if !sure {
					if ocschema.FitsStrict(r, b) && len(ps) > 0 || ocschema.Fits(r, b) && !onlyIDs(ps) {
						t.Fatalf("%s %s: the fast path says it fits, full check %v", r, b, ps)
					}
					continue
				}
				if got, want := ocschema.FitsStrict(r, b), len(ps) == 0; got != want {
					t.Fatalf("%s %s: fast path says fits=%v, full check %v", r, b, got, ps)
				} else if got {
					fit++
				}
				if got, want := ocschema.Fits(r, b), onlyIDs(ps); got != want {
					t.Fatalf("%s %s: Fits says %v, full check %v", r, b, got, ps)
				} else if got {
					fitIDs++
				}
				if got := ocschema.Check(r, b, ocschema.IDs{}); len(got) != len(ps) {
					t.Fatalf("%s %s: Check %v, full check %v", r, b, got, ps)
				}
			}
		}
	}
	// Both verdicts must be common, or the comparison proves little.
	if fit < 100 || fitIDs < 1000 || bodies-fitIDs < 1000 {
		t.Fatalf("%d bodies: %d fit, %d fit but for ids", bodies, fit, fitIDs)
	}
	t.Logf("%d bodies: %d fit, %d fit but for ids", bodies, fit, fitIDs)
}

// TestFitsAllocatesNothing: checking a record that fits allocates nothing.
func TestFitsAllocatesNothing(t *testing.T) {
	for _, c := range []struct {
		r    ocschema.Record
		body string
	}{
		{ocschema.PartRecord, toolDone},
		{ocschema.PartRecord, stepEnd},
		{ocschema.MessageRecord, userMsg},
		{ocschema.MessageRecord, asstMsg},
	} {
		b := []byte(c.body)
		if !ocschema.Fits(c.r, b) {
			t.Fatalf("%s does not fit", b)
		}
		if n := testing.AllocsPerRun(100, func() { ocschema.Fits(c.r, b) }); n != 0 {
			t.Errorf("Fits(%s) allocates %v times", b, n)
		}
		if n := testing.AllocsPerRun(100, func() { ocschema.Check(c.r, b, ocschema.IDs{}) }); n != 0 && c.r == ocschema.PartRecord && strings.Contains(c.body, `"id"`) {
			t.Errorf("Check(%s) allocates %v times", b, n)
		}
	}
}

// FuzzFits: on any valid JSON, the fast path never says a record fits that
// the full check rejects.
func FuzzFits(f *testing.F) {
	for _, b := range corpus(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !gjson.ValidBytes(b) {
			return
		}
		for _, r := range []ocschema.Record{ocschema.MessageRecord, ocschema.PartRecord} {
			ps := ocschema.FullCheck(r, b, ocschema.IDs{})
			if ocschema.FitsStrict(r, b) && len(ps) > 0 {
				t.Fatalf("%s %s: fast path says it fits, full check %v", r, b, ps)
			}
			if ocschema.Fits(r, b) && !onlyIDs(ps) {
				t.Fatalf("%s %s: Fits says it fits, full check %v", r, b, ps)
			}
		}
	})
}
