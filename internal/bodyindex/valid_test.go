package bodyindex

import (
	"bytes"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// checkValidIndex compares Valid's one-pass validation and index with
// gjson.ValidBytes and Build on one body.
func checkValidIndex(t *testing.T, name string, raw []byte) {
	t.Helper()
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return // CheckBody names an empty body before asking Valid
	}
	idx, valid := Valid(raw, trimmed)
	if wantValid := gjson.ValidBytes(trimmed); valid != wantValid {
		t.Fatalf("%s: %q: Valid says %v, gjson says %v", name, raw, valid, wantValid)
	}
	if !valid {
		if idx != nil {
			t.Fatalf("%s: %q: damaged body indexed", name, raw)
		}
		return
	}
	want := Build(raw)
	if !reflect.DeepEqual(idx, want) {
		t.Fatalf("%s: %q: one-pass index %+v, Build %+v", name, raw, idx, want)
	}
}

var validIndexSeeds = []string{
	`{}`, ` {} `, "\v{}", "{}\v", `[]`, `[1, 2 ,[3], {"a":[]}]`, `"s"`, `1`, `-0.5e+7`, `-`, `01`, `1.`, `1e`, `1E-`, `true`, `tru`, `nul`, `falsey`,
	" {\n  \"a\" : { \"b\" : { \"c\" : 1 } } ,\n \"n\": -1.5e3 , \"t\":true,\"f\":false,\"z\":null }\n",
	`{"arr":[{"x":1},{"x":"two"},[3]],"a":"[{]}"}`,
	`{"text":"a \"quoted\" \\ word\\","esc":"\u00e9\n","a":{"b":"\"}"}}`,
	`{"dup":1,"dup":2}`, `{"a\"b":1,"a":2}`, `{"a":1,"b\\c":2}`, `{"a.b":1,"a":{"b":2}}`,
	`{"a":{"b":1}`, `{"a":}`, `{"a":1,}`, `{"a" 1}`, `{"a":1`, `{"a":1}x`, `{"a":1} {}`, `{,}`, `[,]`, `[1,]`,
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"\uABcd"}`, "{\"a\":\"tab\there\"}", `{"a":"é ü 中文 😀"}`,
	`{"long":"0123456789abcdef0123456789abcdef\"0123456789abcdef\\\\0123456789abcdef"}`,
	`{"a":[1,[2,[3,{"b":[4]}]]],"c":"d"}`, "{\"a\":1}\u00a0", "\u00a0{\"a\":1}", `{ "a" :1 , "b":[ ] , "c":{ } }`,
}

// TestValidIndexMatchesGJSON checks the one-pass validator and index
// against gjson.ValidBytes and indexBody on hand-written bodies, every
// record of the recorded and fixture stores, and random damage done to them.
func TestValidIndexMatchesGJSON(t *testing.T) {
	bodies := append([]string(nil), validIndexSeeds...)
	for _, root := range []string{"../../testdata/real", "../../testdata/sessions"} {
		filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() && strings.HasSuffix(p, ".json") {
				if raw, err := os.ReadFile(p); err == nil {
					bodies = append(bodies, string(raw))
				}
			}
			return nil
		})
	}
	if len(bodies) < len(validIndexSeeds)+20 {
		t.Fatalf("only %d bodies to compare", len(bodies))
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("{}[]\",:\\ \t\n\rtfnu0123456789-+.eEabx\x01\x7f\xc3\xa9")
	for i, b := range bodies {
		checkValidIndex(t, "body", []byte(b))
		for range 200 {
			m := []byte(b)
			switch op := rng.Intn(4); {
			case len(m) == 0:
				m = append(m, alphabet[rng.Intn(len(alphabet))])
			case op == 0: // replace a byte
				m[rng.Intn(len(m))] = alphabet[rng.Intn(len(alphabet))]
			case op == 1: // delete a byte
				j := rng.Intn(len(m))
				m = append(m[:j], m[j+1:]...)
			case op == 2: // insert a byte
				j := rng.Intn(len(m) + 1)
				m = append(m[:j], append([]byte{alphabet[rng.Intn(len(alphabet))]}, m[j:]...)...)
			default: // truncate
				m = m[:rng.Intn(len(m))]
			}
			checkValidIndex(t, "mutated body "+string(rune('0'+i%10)), m)
		}
	}
}

func FuzzValidIndex(f *testing.F) {
	for _, s := range validIndexSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkValidIndex(t, "fuzz", raw) })
}

// TestNestedLookupAnswersLikeGJSON covers the walk below the top level:
// duplicate keys (gjson takes the first that leads to a hit), scalars and
// arrays met on the way, escaped keys and strings.
func TestNestedLookupAnswersLikeGJSON(t *testing.T) {
	bodies := []string{
		`{"a":{"b":1,"b":{"c":2}},"metadata":{"anthropic":{"signature":"sig"},"anthropic":{"redactedData":"r"}}}`,
		`{"a":{"b":{"x":1},"b":{"c":"second"}},"state":{"time":{"start":"1"},"time":{"end":2}}}`,
		`{"a":{"b":"str","b":{"c":3}},"time":{"created":1,"completed":null}}`,
		`{"a":{"b":[{"c":1}],"b":{"c":4}},"arr":[1,2],"error":{"data":{"message":"m\"q"}}}`,
		`{"a":{"b\"":{"c":1},"b":{"c":5}},"error":{"name":"E","data":{"message":"plain"}}}`,
		`{"a":{ "b" : { "c" : "\u00e9" } },"metadata":{"bedrock":{"signature":""}},"text":"t\ta"}`,
		`{"a":{},"metadata":{},"state":{"status":"completed","input":{},"output":"o\n\"x\"","time":{"start":1,"end":2}}}`,
		`{"a":{"0":{"c":6}},"tokens":{"cache":{"read":12.5e1}},"model":{"modelID":"m"}}`,
	}
	paths := append([]string{"a.0.c", "a.b.c.d", "a.b.-", "tokens.cache", "state.output", "error.data"}, indexPaths...)
	for _, b := range bodies {
		raw := []byte(b)
		idx := Build(raw)
		if idx == nil {
			t.Fatalf("%s: not indexed", b)
		}
		for _, p := range paths {
			if got, want := get(idx, raw, p), gjson.GetBytes(raw, p); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Get(%q) = %#v, gjson says %#v", b, p, got, want)
			}
		}
	}
}

// TestKidLookupAnswersLikeGJSON asks every record of the recorded and
// fixture stores, through the index Valid builds, for each path of two keys
// its top-level objects hold and each of indexPaths: the members of
// top-level objects (kids) must answer as gjson does, duplicates and
// escaped keys included.
func TestKidLookupAnswersLikeGJSON(t *testing.T) {
	bodies := []string{
		`{"state":{"status":"completed","input":{"a":1},"output":"o\n\"x\"","metadata":{"output":"o"},"time":{"start":1,"end":2}}}`,
		`{"a":{"b":1,"b":{"c":2}},"a":{"b":{"c":3}}}`,
		`{"a":{"x":1,"b\"":{"c":1},"b":{"c":5}},"t":{}}`,
		`{"a":{"b":[{"c":1}],"b":{"c":4}},"s":"{\"a\":1}"}`,
	}
	for _, root := range []string{"../../testdata/real", "../../testdata/sessions"} {
		filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() && strings.HasSuffix(p, ".json") {
				if raw, err := os.ReadFile(p); err == nil {
					bodies = append(bodies, string(raw))
				}
			}
			return nil
		})
	}
	kids := 0
	for _, b := range bodies {
		raw := []byte(b)
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			continue
		}
		idx, ok := Valid(raw, trimmed)
		if !ok || idx == nil {
			continue
		}
		paths := append([]string{"a.b", "a.b.c", "a.x", "t.x"}, indexPaths...)
		for _, k := range idx.keys {
			if k.kidEnd < 0 {
				continue
			}
			for _, c := range idx.kids[k.kidStart:k.kidEnd] {
				kids++
				paths = append(paths, string(raw[k.keyStart:k.keyEnd])+"."+string(raw[c.keyStart:c.keyEnd]))
			}
		}
		for _, p := range paths {
			if got, want := get(idx, raw, p), gjson.GetBytes(raw, p); !reflect.DeepEqual(got, want) {
				t.Errorf("%.80s: Get(%q) = %#v, gjson says %#v", b, p, got, want)
			}
		}
	}
	if kids < 100 {
		t.Fatalf("only %d members of top-level objects indexed", kids)
	}
}
