package store

import (
	"reflect"
	"testing"

	"github.com/sessfix/sessfix/internal/bodyindex"
)

// TestCheckBodyNUL pins the reasons for bodies with NUL bytes, which
// checkBody only looks for once validation failed: a NUL is invalid
// anywhere in JSON, inside a string too; and for text in another encoding.
func TestCheckBodyNUL(t *testing.T) {
	for raw, want := range map[string]string{
		"\xef\xbb\xbf{\"a\":1}":               "starts with a UTF-8 byte order mark",
		"\xff\xfe{\x00\"\x00a\x00\"\x00}\x00": "UTF-16 text", // little endian, as PowerShell writes
		"\xfe\xff\x00{\x00\"\x00a\x00\"\x00}": "UTF-16 text",
		"\xff\xfe{\"type\":\"text\"}":         "invalid JSON", // only looks like a byte order mark
		"\x00\x00\x00":                        "NUL-filled",
		"{\"a\":\"x\x00y\"}":                  "contains NUL bytes",
		"{\"a\":1}\x00":                       "contains NUL bytes",
		"\x00{\"a\":1}":                       "contains NUL bytes",
		" \x00 ":                              "contains NUL bytes",
		"{\"a\":1,\x00\"b\":2}":               "contains NUL bytes",
	} {
		_, err := checkBody([]byte(raw))
		pe, ok := err.(*ParseError)
		if !ok || pe.Reason != want {
			t.Errorf("checkBody(%q) = %v, want %s", raw, err, want)
		}
	}
}

func TestBodyIndexIgnoredOnceRawChanges(t *testing.T) {
	p, err := NewPart(Record{Raw: []byte(`{"type":"text","text":"old"}`)}, "msg_x", "ses_x")
	if err != nil {
		t.Fatal(err)
	}
	if p.idx == nil {
		t.Fatal("NewPart built no index")
	}
	p.Raw = []byte(`{"type":"text","text":"new, longer"}`)
	if got := p.Get("text").String(); got != "new, longer" {
		t.Errorf("after replacing Raw, Get(text) = %q", got)
	}
	same := []byte(`{"type":"text","text":"old"}`)
	p.Raw = same
	copy(p.Raw, `{"type":"text","text":"odd"}`)
	if got := p.Get("text").String(); got != "odd" {
		t.Errorf("after replacing Raw with a body of the same length, Get(text) = %q", got)
	}
}

// TestCheckBodyKeepsItsIndex: the index checkBody builds while validating
// is the one bodyindex.Build builds, for an object; nothing for the rest.
func TestCheckBodyKeepsItsIndex(t *testing.T) {
	for _, raw := range []string{`{"type":"text","text":"a \"q\""}`, " {\n  \"a\": [1, {\"b\": 2}]\n}\n", `{}`, `[1]`, `{"a":`, "\v{}"} {
		b := []byte(raw)
		idx, err := checkBody(b)
		want := bodyindex.Build(b)
		if err != nil {
			want = nil
		}
		if !reflect.DeepEqual(idx, want) {
			t.Errorf("checkBody(%q) index %+v (%v), want %+v", raw, idx, err, want)
		}
	}
}
