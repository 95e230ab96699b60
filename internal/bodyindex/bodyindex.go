package bodyindex

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Index records where each top-level key of one JSON object body is, and
// the keys of each top-level object value (a part's state, a message's
// time): a path of two or more keys (state.status, state.time.start) is
// found without walking the strings before it. It is tied to the exact
// slice it was built from: Lookup answers only for that slice, so a body
// replaced in memory falls back to gjson.
type Index struct {
	base *byte // &raw[0] of the indexed body
	n    int   // len(raw)
	keys []keySpan
	kids []span // the keys of the top-level object values
	// inline and kidsInline back keys and kids for bodies with few keys
	// (every OpenCode message and part): one allocation per index.
	inline     [12]keySpan
	kidsInline [16]span
}

// Of reports whether x indexes exactly raw (the slice it was built from,
// unchanged in length).
func (x *Index) Of(raw []byte) bool {
	return x != nil && len(raw) == x.n && len(raw) > 0 && &raw[0] == x.base
}

// newIndex returns an empty index of raw.
func newIndex(raw []byte) *Index {
	idx := &Index{base: &raw[0], n: len(raw)}
	idx.keys = idx.inline[:0]
	idx.kids = idx.kidsInline[:0]
	return idx
}

// span locates one member: the key's bytes without quotes (and without
// escapes, see Build) and the value's raw bytes.
type span struct {
	keyStart, keyEnd int32
	valStart, valEnd int32
}

// keySpan is a top-level member, with its value's members when the value is
// an object whose keys have no escapes: kids[kidStart:kidEnd]; kidEnd is -1
// when they are not indexed.
type keySpan struct {
	span
	kidStart, kidEnd int32
}

// Build indexes the top-level members of a JSON object body. It returns
// nil when the body is not a well-formed object, has a key with an escape
// sequence, or is too large for the offsets: callers then use gjson.
func Build(raw []byte) *Index {
	if len(raw) == 0 || len(raw) > 1<<31-1 {
		return nil
	}
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	idx := newIndex(raw)
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return idx
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil
		}
		end, escaped := stringEnd(raw, i)
		if end < 0 || escaped {
			return nil
		}
		var ks keySpan
		ks.keyStart, ks.keyEnd = int32(i+1), int32(end-1)
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return nil
		}
		ks.valStart, ks.valEnd = int32(i), int32(vend)
		ks.kidStart, ks.kidEnd = 0, -1
		if raw[i] == '{' {
			ks.kidStart, ks.kidEnd = idx.indexKids(raw, i)
		}
		idx.keys = append(idx.keys, ks)
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return nil
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return idx
		default:
			return nil
		}
	}
}

// indexKids appends the members of the object at raw[start] to x.kids and
// returns their range; 0, -1 (nothing kept) when a key has an escape or the
// object is malformed.
func (x *Index) indexKids(raw []byte, start int) (int32, int32) {
	from := len(x.kids)
	i := skipSpace(raw, start+1)
	if i < len(raw) && raw[i] == '}' {
		return int32(from), int32(from)
	}
	for i < len(raw) && raw[i] == '"' {
		end, escaped := stringEnd(raw, i)
		if end < 0 || escaped {
			break
		}
		ks := span{keyStart: int32(i + 1), keyEnd: int32(end - 1)}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			break
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			break
		}
		ks.valStart, ks.valEnd = int32(i), int32(vend)
		x.kids = append(x.kids, ks)
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			break
		}
		if raw[i] == '}' {
			return int32(from), int32(len(x.kids))
		}
		if raw[i] != ',' {
			break
		}
		i = skipSpace(raw, i+1)
	}
	x.kids = x.kids[:from]
	return 0, -1
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string starting at raw[i]
// (a '"'), and whether it holds an escape sequence; -1 when unterminated.
func stringEnd(raw []byte, i int) (int, bool) {
	escaped := false
	j := i + 1
	for {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return -1, escaped
		}
		q := j + k
		// The quote is escaped when an odd number of backslashes precede it.
		bs := 0
		for p := q - 1; p > i && raw[p] == '\\'; p-- {
			bs++
		}
		if !escaped && bytes.IndexByte(raw[j:q], '\\') >= 0 {
			escaped = true
		}
		if bs%2 == 0 {
			return q + 1, escaped
		}
		j = q + 1
	}
}

// valueEnd returns the index just past the JSON value starting at raw[i],
// or -1 when it is malformed. Literals and numbers end at the next
// delimiter; they are not validated (the body was validated).
func valueEnd(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		end, _ := stringEnd(raw, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end, _ := stringEnd(raw, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(raw) {
			switch raw[j] {
			case ',', '}', ']', ' ', '\n', '\r', '\t':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		return -1
	}
}

// Lookup answers a gjson path, as gjson.GetBytes(raw, path) would, from the
// index when its first component is a plain key; ok is false when the
// index cannot answer (a nil index, a raw that is not the indexed slice,
// or path syntax beyond plain keys first).
func (x *Index) Lookup(raw []byte, path string) (res gjson.Result, ok bool) {
	if x == nil || len(raw) != x.n || len(raw) == 0 || &raw[0] != x.base {
		return gjson.Result{}, false
	}
	first, rest := path, ""
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '.' {
			first, rest = path[:i], path[i+1:]
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return gjson.Result{}, false
		}
	}
	if first == "" || (rest == "" && len(first) != len(path)) {
		return gjson.Result{}, false
	}
	for _, k := range x.keys {
		if string(raw[k.keyStart:k.keyEnd]) != first {
			continue
		}
		val := raw[k.valStart:k.valEnd]
		start := int(k.valStart)
		if rest == "" {
			return valueResult(raw, start, int(k.valEnd)), true
		}
		var found, sure bool
		if k.kidEnd >= 0 {
			res, found, sure = x.kid(raw, k, rest)
		} else {
			res, found, sure = descend(raw, start, rest)
		}
		if sure {
			if !found {
				return gjson.Result{}, true
			}
			return res, true
		}
		res = gjson.Get(bodyString(val), rest)
		if res.Index > 0 {
			res.Index += start
		}
		for i := range res.Indexes {
			res.Indexes[i] += start
		}
		return res, true
	}
	return gjson.Result{}, true
}

// valueResult is gjson.ParseBytes of the value raw[start:end] with its
// Index set to start, except that its strings share raw's memory instead of
// copying it: a text or a tool output is sliced, not copied, each time a
// rule reads it. Record bodies are never written in place (an edit builds a
// new slice), so the strings never change.
func valueResult(raw []byte, start, end int) gjson.Result {
	val := bodyString(raw[start:end])
	if len(val) >= 2 && val[0] == '"' && strings.IndexByte(val, '\\') < 0 {
		return gjson.Result{Type: gjson.String, Raw: val, Str: val[1 : len(val)-1], Index: start}
	}
	res := gjson.Parse(val)
	res.Index = start
	return res
}

// bodyString is b as a string sharing b's memory. Only for record bodies,
// which nothing writes in place.
func bodyString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// kid is descend on the value of k, an object whose members are indexed:
// the same answers, from the index for the value's own keys.
func (x *Index) kid(raw []byte, k keySpan, path string) (res gjson.Result, found, sure bool) {
	comp, rest, ok := splitPath(path)
	if !ok {
		return res, false, false
	}
	for _, c := range x.kids[k.kidStart:k.kidEnd] {
		if string(raw[c.keyStart:c.keyEnd]) != comp {
			continue
		}
		if rest == "" {
			return valueResult(raw, int(c.valStart), int(c.valEnd)), true, true
		}
		switch raw[c.valStart] {
		case '{':
			r, f, ok := descend(raw, int(c.valStart), rest)
			if !ok || f {
				return r, f, ok
			}
		case '[':
			return res, false, false
		}
	}
	return res, false, true
}

// splitPath splits a gjson path into its first component and the rest; ok
// is false when the first component is not a plain key (descend and kid
// leave those to gjson).
func splitPath(path string) (comp, rest string, ok bool) {
	comp = path
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '.' {
			comp, rest = path[:i], path[i+1:]
			break
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return "", "", false
		}
	}
	if comp == "" || (rest == "" && len(comp) != len(path)) {
		return "", "", false
	}
	return comp, rest, true
}

// descend answers path (a gjson path without its first component) inside
// the object starting at raw[start], the way gjson.GetBytes on that value
// would, when every component is a plain key and the walk only meets
// objects and unescaped keys; sure is false otherwise (the caller asks
// gjson). found is false when gjson would find nothing.
func descend(raw []byte, start int, path string) (res gjson.Result, found, sure bool) {
	comp, rest, ok := splitPath(path)
	if !ok {
		return res, false, false
	}
	if start >= len(raw) || raw[start] != '{' {
		return res, false, false
	}
	i := skipSpace(raw, start+1)
	if i < len(raw) && raw[i] == '}' {
		return res, false, true
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return res, false, false
		}
		end, escaped := stringEnd(raw, i)
		if end < 0 || escaped {
			return res, false, false
		}
		match := string(raw[i+1:end-1]) == comp
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return res, false, false
		}
		i = skipSpace(raw, i+1)
		vend := valueEnd(raw, i)
		if vend < 0 {
			return res, false, false
		}
		if match {
			if rest == "" {
				return valueResult(raw, i, vend), true, true
			}
			switch raw[i] {
			case '{':
				r, f, ok := descend(raw, i, rest)
				if !ok || f {
					return r, f, ok
				}
			case '[':
				return res, false, false
			}
		}
		i = skipSpace(raw, vend)
		if i >= len(raw) {
			return res, false, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return res, false, true
		default:
			return res, false, false
		}
	}
}

// Valid reports whether trimmed (raw without its surrounding white space)
// is valid JSON, accepting exactly what gjson.ValidBytes accepts, and
// indexes its top-level keys on the way when it is an object that Build
// would index; the index (offsets into raw) is nil otherwise. One pass
// instead of gjson.ValidBytes followed by Build.
func Valid(raw, trimmed []byte) (*Index, bool) {
	v := validator{data: trimmed}
	// Index only what Build would: an object starting raw after plain
	// JSON white space, small enough for the offsets.
	off := cap(raw) - cap(trimmed)
	if trimmed[0] == '{' && len(raw) <= 1<<31-1 && skipSpace(raw, 0) == off {
		v.idx = newIndex(raw)
		v.off = int32(off)
	}
	i, ok := v.any(0, 0)
	if !ok || i != len(trimmed) {
		return nil, false
	}
	return v.idx, true
}

// validator is a JSON validator that follows gjson's grammar (valid.go in
// gjson: validpayload and friends) step for step, with a faster string scan
// and the top-level keys recorded into idx.
type validator struct {
	data []byte
	idx  *Index // nil: not indexing
	off  int32  // offset of data in the indexed body
	// kidsBad: the top-level value being validated is an object with a
	// key that has an escape, so its members are not indexed.
	kidsBad bool
}

func (v *validator) any(i, depth int) (int, bool) {
	data := v.data
	for ; i < len(data); i++ {
		switch data[i] {
		default:
			return i, false
		case ' ', '\t', '\n', '\r':
			continue
		case '{':
			return v.object(i+1, depth+1)
		case '[':
			return v.array(i+1, depth+1)
		case '"':
			end, ok, _ := v.str(i + 1)
			return end, ok
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return v.number(i + 1)
		case 't':
			return v.literal(i+1, "rue")
		case 'f':
			return v.literal(i+1, "alse")
		case 'n':
			return v.literal(i+1, "ull")
		}
	}
	return i, false
}

func (v *validator) literal(i int, rest string) (int, bool) {
	if i+len(rest) <= len(v.data) && string(v.data[i:i+len(rest)]) == rest {
		return i + len(rest), true
	}
	return i, false
}

func (v *validator) object(i, depth int) (int, bool) {
	data := v.data
	for ; i < len(data); i++ {
		switch data[i] {
		default:
			return i, false
		case ' ', '\t', '\n', '\r':
			continue
		case '}':
			return i + 1, true
		case '"':
			for {
				keyStart := i + 1
				end, ok, escaped := v.str(i + 1)
				if !ok {
					return end, false
				}
				i = end
				i = skipSpace(data, i)
				if i >= len(data) || data[i] != ':' {
					return i, false
				}
				i++
				i = skipSpace(data, i)
				valStart := i
				kidStart := 0
				if depth == 1 && v.idx != nil {
					kidStart, v.kidsBad = len(v.idx.kids), false
				}
				if i, ok = v.any(i, depth); !ok {
					return i, false
				}
				if v.idx != nil {
					s := span{
						keyStart: int32(keyStart) + v.off, keyEnd: int32(end-1) + v.off,
						valStart: int32(valStart) + v.off, valEnd: int32(i) + v.off,
					}
					switch {
					case depth == 1 && escaped:
						v.idx = nil
					case depth == 1:
						ks := keySpan{span: s, kidStart: 0, kidEnd: -1}
						if data[valStart] == '{' && !v.kidsBad {
							ks.kidStart, ks.kidEnd = int32(kidStart), int32(len(v.idx.kids))
						} else {
							v.idx.kids = v.idx.kids[:kidStart]
						}
						v.idx.keys = append(v.idx.keys, ks)
					case depth == 2 && escaped:
						v.kidsBad = true
					case depth == 2 && !v.kidsBad:
						v.idx.kids = append(v.idx.kids, s)
					}
				}
				i = skipSpace(data, i)
				if i >= len(data) {
					return i, false
				}
				switch data[i] {
				case '}':
					return i + 1, true
				case ',':
				default:
					return i, false
				}
				i++
				i = skipSpace(data, i)
				if i >= len(data) || data[i] != '"' {
					return i, false
				}
			}
		}
	}
	return i, false
}

func (v *validator) array(i, depth int) (int, bool) {
	data := v.data
	for ; i < len(data); i++ {
		switch data[i] {
		default:
			for ; i < len(data); i++ {
				var ok bool
				if i, ok = v.any(i, depth); !ok {
					return i, false
				}
				i = skipSpace(data, i)
				if i >= len(data) {
					return i, false
				}
				switch data[i] {
				case ']':
					return i + 1, true
				case ',':
				default:
					return i, false
				}
			}
		case ' ', '\t', '\n', '\r':
			continue
		case ']':
			return i + 1, true
		}
	}
	return i, false
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// str validates a string whose opening quote is at i-1 and returns the
// index past its closing quote, and whether it holds an escape.
func (v *validator) str(i int) (int, bool, bool) {
	data := v.data
	escaped := false
	for {
		// Skip plain bytes (none below 0x20, no '"', no '\') eight at a
		// time. The lowest flagged byte of a word is always a special one
		// (borrows only flag bytes above it), so jump straight to it.
		for i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			q := w ^ ('"' * lsb8)
			b := w ^ ('\\' * lsb8)
			m := ((w-0x20*lsb8)&^w | (q-lsb8)&^q | (b-lsb8)&^b) & msb8
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) / 8
			// A two-byte escape (\n, \t, \" ...), frequent in code and tool
			// output, is stepped over here without leaving the word loop.
			if data[i] == '\\' && i+1 < len(data) && shortEscape[data[i+1]] {
				escaped = true
				i += 2
				continue
			}
			break
		}
		if i >= len(data) {
			return i, false, escaped
		}
		switch c := data[i]; {
		case c < ' ':
			return i, false, escaped
		case c == '"':
			return i + 1, true, escaped
		case c == '\\':
			escaped = true
			i++
			if i == len(data) {
				return i, false, escaped
			}
			switch data[i] {
			default:
				return i, false, escaped
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					i++
					if i >= len(data) || !isHex(data[i]) {
						return i, false, escaped
					}
				}
			}
		}
		i++
	}
}

// shortEscape marks the bytes that may follow a backslash in a two-byte
// JSON escape.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number validates a number whose first byte is at i-1, as gjson does.
func (v *validator) number(i int) (int, bool) {
	data := v.data
	i--
	if data[i] == '-' {
		i++
		if i == len(data) || data[i] < '0' || data[i] > '9' {
			return i, false
		}
	}
	if data[i] == '0' {
		i++
	} else {
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	if i == len(data) {
		return i, true
	}
	if data[i] == '.' {
		i++
		if i == len(data) || data[i] < '0' || data[i] > '9' {
			return i, false
		}
		i++
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	if i == len(data) {
		return i, true
	}
	if data[i] == 'e' || data[i] == 'E' {
		i++
		if i == len(data) {
			return i, false
		}
		if data[i] == '+' || data[i] == '-' {
			i++
		}
		if i == len(data) || data[i] < '0' || data[i] > '9' {
			return i, false
		}
		i++
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	return i, true
}
