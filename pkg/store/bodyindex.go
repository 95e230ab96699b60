package store

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// bodyIndex records where each top-level key of a record body is, so that
// Record.Get finds a key without scanning the body from the start: rules
// ask every part for keys it does not have ("ignored", "synthetic", the ids
// a SQLite data column lacks) or that come after a long text or tool
// output, and each such gjson lookup would read the whole body again.
//
// An index is built once, when a message or part is made, and never
// changes, so records stay safe to read from several goroutines. It is
// tied to the exact Raw slice it was built from: a record whose Raw was
// replaced (an edit applied in memory) falls back to gjson.
type bodyIndex struct {
	base *byte // &raw[0] of the indexed body
	n    int   // len(raw)
	keys []keySpan
}

// keySpan locates one top-level member: the key's bytes without quotes
// (and without escapes, see indexBody) and the value's raw bytes.
type keySpan struct {
	keyStart, keyEnd int32
	valStart, valEnd int32
}

// indexBody indexes the top-level members of a JSON object body. It
// returns nil when the body is not a well-formed object, has a key with an
// escape sequence, or is too large for the offsets: Get then uses gjson.
func indexBody(raw []byte) *bodyIndex {
	if len(raw) == 0 || len(raw) > 1<<31-1 {
		return nil
	}
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil
	}
	idx := &bodyIndex{base: &raw[0], n: len(raw), keys: make([]keySpan, 0, 12)}
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
// delimiter; they are not validated (the body passed CheckBody).
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

// lookup answers a gjson path from the index when its first component is
// a plain key; ok is false when the index cannot answer (no index, a Raw
// that is not the indexed one, or path syntax beyond plain keys first).
func (x *bodyIndex) lookup(raw []byte, path string) (res gjson.Result, ok bool) {
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
			res = gjson.ParseBytes(val)
			res.Index = start
			return res, true
		}
		res = gjson.GetBytes(val, rest)
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
