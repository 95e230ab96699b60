package fix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// layout is the formatting of a store's record bodies: pretty JSON with an
// indent unit (JSON shapes: OpenCode writes JSON.stringify(x, null, 2)) or
// compact JSON (SQLite data columns).
type layout struct {
	pretty bool
	unit   string // indent unit when pretty
	nl     bool   // bodies end with a newline
	crlf   bool   // lines end in CRLF (a store checked out on Windows)
}

// eol is the layout's line break.
func (l layout) eol() string {
	if l.crlf {
		return "\r\n"
	}
	return "\n"
}

var (
	compactLayout = layout{}
	prettyLayout  = layout{pretty: true, unit: "  "}
)

// detectLayout reads the formatting of an existing body: pretty when it spans
// lines, with the indent of its first indented line as the unit.
func detectLayout(raw []byte) layout {
	t := bytes.TrimRight(raw, " \t\r\n")
	i := bytes.IndexByte(t, '\n')
	if i < 0 {
		return compactLayout
	}
	l := layout{pretty: true, unit: "  ", nl: len(t) < len(raw) && bytes.HasSuffix(raw, []byte("\n")), crlf: i > 0 && t[i-1] == '\r'}
	rest := t[i+1:]
	j := 0
	for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t') {
		j++
	}
	if j > 0 {
		l.unit = string(rest[:j])
	}
	return l
}

// marshal encodes v as compact JSON without HTML escaping (JSON.stringify
// does not escape <, > or &).
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("fix: cannot encode %T: %v", v, err))
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// format renders compact JSON in the layout. prefix is the indentation of the
// line the value starts on (lines after the first get it).
func (l layout) format(compact []byte, prefix string) []byte {
	if !l.pretty {
		var b bytes.Buffer
		if err := json.Compact(&b, compact); err != nil {
			return compact
		}
		return b.Bytes()
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, prefix, l.unit); err != nil {
		return compact
	}
	if l.crlf {
		// Line breaks in indented JSON are whitespace between values only.
		return bytes.ReplaceAll(b.Bytes(), []byte("\n"), []byte("\r\n"))
	}
	return b.Bytes()
}

// body renders a whole new record body.
func (l layout) body(o *object) []byte {
	out := l.format(o.compact(), "")
	if l.nl {
		out = append(out, l.eol()...)
	}
	return out
}

// object is a JSON object that keeps its keys in insertion order, so new
// records have the key order OpenCode writes.
type object struct {
	keys []string
	vals [][]byte // compact JSON
}

func obj() *object { return &object{} }

// set adds or replaces a key with a Go value.
func (o *object) set(key string, v any) *object {
	var raw []byte
	switch x := v.(type) {
	case *object:
		raw = x.compact()
	case json.RawMessage:
		raw = x
	default:
		raw = marshal(v)
	}
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = raw
			return o
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, raw)
	return o
}

func (o *object) compact() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(k))
		b.WriteByte(':')
		b.Write(o.vals[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// escapePath escapes a key for gjson/sjson paths.
func escapePath(key string) string {
	r := strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`, "!", `\!`)
	return r.Replace(key)
}

func joinPath(keys []string) string {
	esc := make([]string, len(keys))
	for i, k := range keys {
		esc[i] = escapePath(k)
	}
	return strings.Join(esc, ".")
}

// lineIndent returns the whitespace at the start of the line holding offset i.
func lineIndent(raw []byte, i int) string {
	start := bytes.LastIndexByte(raw[:i], '\n') + 1
	j := start
	for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t') {
		j++
	}
	return string(raw[start:j])
}

// setJSON sets the value at a path of object keys to v (a Go value or
// *object), changing no other byte of raw: an existing value is replaced in
// place; a missing key is inserted before its object's closing brace in the
// body's own formatting (a new line at the right indentation for pretty
// JSON, compact otherwise). Missing intermediate objects are created.
func setJSON(raw []byte, v any, keys ...string) ([]byte, error) {
	var val []byte
	switch x := v.(type) {
	case *object:
		val = x.compact()
	case json.RawMessage:
		val = x
	default:
		val = marshal(v)
	}
	l := detectLayout(raw)
	if !gjson.ValidBytes(raw) || !gjson.ParseBytes(raw).IsObject() {
		return nil, fmt.Errorf("record body is not a json object")
	}
	full := gjson.GetBytes(raw, joinPath(keys))
	if full.Exists() && full.Index > 0 {
		out := make([]byte, 0, len(raw)+len(val))
		out = append(out, raw[:full.Index]...)
		out = append(out, l.format(val, lineIndent(raw, full.Index))...)
		out = append(out, raw[full.Index+len(full.Raw):]...)
		return out, nil
	}
	// Find the deepest existing object on the path.
	depth := 0
	parentStart, parentRaw := 0, raw
	for depth < len(keys)-1 {
		r := gjson.GetBytes(raw, joinPath(keys[:depth+1]))
		if !r.Exists() || r.Index == 0 {
			break
		}
		if !r.IsObject() {
			// A non-object (null, string) in the way: replace it whole.
			return setJSON(raw, json.RawMessage(nestValue(val, keys[depth+1:])), keys[:depth+1]...)
		}
		parentStart, parentRaw = r.Index, []byte(r.Raw)
		depth++
	}
	if depth == 0 {
		lead := bytes.IndexByte(raw, '{')
		parentStart = lead
		parentRaw = raw[lead : bytes.LastIndexByte(raw, '}')+1]
	}
	// Value for keys[depth] nests the rest.
	nested := nestValue(val, keys[depth+1:])
	closeAt := parentStart + len(parentRaw) - 1 // the closing brace
	if raw[closeAt] != '}' {
		return nil, fmt.Errorf("cannot find the end of object %q", joinPath(keys[:depth]))
	}
	// The member is written the way the object's other members are: on its
	// own indented line in a pretty body, with no spaces in a compact one.
	key := marshal(keys[depth])
	lead, sep, end, value := "", ":", "", nested
	if l.pretty {
		ind := lineIndent(raw, parentStart)
		child := ind + l.unit
		lead, sep, end, value = l.eol()+child, ": ", l.eol()+ind, l.format(nested, child)
	}
	member := append([]byte(lead), key...)
	member = append(member, sep...)
	member = append(member, value...)
	var out []byte
	if len(bytes.TrimSpace(raw[parentStart+1:closeAt])) == 0 {
		// An empty object: the member replaces what is between the braces.
		out = append(out, raw[:parentStart+1]...)
		out = append(out, member...)
		out = append(out, end...)
		return append(out, raw[closeAt:]...), nil
	}
	// After the last value, before the whitespace preceding '}'.
	last := closeAt - 1
	for last > parentStart && isSpace(raw[last]) {
		last--
	}
	out = append(out, raw[:last+1]...)
	out = append(out, ',')
	out = append(out, member...)
	return append(out, raw[last+1:]...), nil
}

// nestValue wraps val in one compact object per key, innermost last:
// nestValue(v, ["a", "b"]) is {"a":{"b":v}}.
func nestValue(val []byte, keys []string) []byte {
	for i := len(keys) - 1; i >= 0; i-- {
		val = obj().set(keys[i], json.RawMessage(val)).compact()
	}
	return val
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// gjsonString returns the string at a top-level key, or nil when the key is
// absent or not a string.
func gjsonString(raw []byte, key string) *string {
	r := gjson.GetBytes(raw, escapePath(key))
	if r.Type != gjson.String {
		return nil
	}
	v := r.Str
	return &v
}
