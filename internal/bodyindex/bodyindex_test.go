package bodyindex

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// indexPaths are the paths rules ask for, plus paths gjson answers in ways
// the index must not change (missing keys, arrays, modifiers, wildcards).
var indexPaths = []string{
	"id", "sessionID", "messageID", "type", "role", "text", "thinking", "ignored", "synthetic", "signature", "data",
	"metadata", "metadata.anthropic.signature", "metadata.anthropic.redactedData", "metadata.bedrock.signature",
	"time", "time.created", "time.completed", "time.start", "time.end", "error", "error.name", "error.data.message",
	"state", "state.status", "state.time.start", "state.time.end", "state.input", "state.output", "tail_start_id",
	"summary", "finish", "parentID", "modelID", "providerID", "tokens.cache.read", "model.modelID",
	"missing", "missing.deeper", "a", "a.b", "a.b.c", "arr", "arr.#", "arr.0", "arr.#.x", "n", "t", "f", "z",
	"dup", "esc", "@this", "*", "t*", "a|b", "tex?", `a\.b`, "", ".", "a.", "permission.#.action",
}

// get is what a record's Get does: the index's answer, else gjson's.
func get(idx *Index, raw []byte, path string) gjson.Result {
	if res, ok := idx.Lookup(raw, path); ok {
		return res
	}
	return gjson.GetBytes(raw, path)
}

func checkIndexed(t *testing.T, name string, raw []byte) {
	t.Helper()
	idx := Build(raw)
	for _, p := range indexPaths {
		got, want := get(idx, raw, p), gjson.GetBytes(raw, p)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Get(%q) = %#v, gjson says %#v", name, p, got, want)
		}
	}
	if idx == nil {
		return
	}
	for _, k := range idx.keys {
		p := string(raw[k.keyStart:k.keyEnd])
		if got, want := get(idx, raw, p), gjson.GetBytes(raw, p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Get(%q) = %#v, gjson says %#v", name, p, got, want)
		}
	}
}

func TestBodyIndexAnswersLikeGJSON(t *testing.T) {
	bodies := map[string]string{
		"empty":      `{}`,
		"spaced":     " {\n  \"a\" : { \"b\" : { \"c\" : 1 } } ,\n \"n\": -1.5e3 , \"t\":true,\"f\":false,\"z\":null }\n",
		"array":      `{"arr":[{"x":1},{"x":"two"},[3]],"a":"[{]}"}`,
		"escapes":    `{"text":"a \"quoted\" \\ word\\","esc":"\u00e9\n","a":{"b":"\"}"}}`,
		"dup":        `{"dup":1,"dup":2}`,
		"escapedKey": `{"a\"b":1,"a":2}`,
		"dotted":     `{"a.b":1,"a":{"b":2}}`,
		"notObject":  `[1,2]`,
		"truncated":  `{"a":{"b":1}`,
		"noValue":    `{"a":}`,
		"trailing":   `{"a":1,}`,
		"garbage":    `{"a" 1}`,
		"endsInNum":  `{"a":1`,
		"blank":      ``,
	}
	for name, body := range bodies {
		checkIndexed(t, name, []byte(body))
	}
	if Build([]byte(`{"a\"b":1}`)) != nil {
		t.Error("a body with an escaped key was indexed; gjson must answer it")
	}
	if Build([]byte(`{"a":1`)) != nil {
		t.Error("a truncated body was indexed")
	}
}

// TestBodyIndexOnRealRecords compares every record of the recorded and
// fixture stores (pretty JSON, ids, tool states, signatures).
func TestBodyIndexOnRealRecords(t *testing.T) {
	n := 0
	for _, root := range []string{"../../testdata/real", "../../testdata/sessions"} {
		err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err != nil || de.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			checkIndexed(t, p, raw)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 20 {
		t.Fatalf("compared only %d records", n)
	}
}
