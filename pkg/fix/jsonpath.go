package fix

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// SetJSON sets the value at a path of object keys in a record body, v a Go
// value or json.RawMessage, changing no other byte: an existing value is
// replaced in place (formatted like the body), a missing key is added in
// the body's own formatting. Session surgery (pkg/surgery) edits records
// with it, the way the mutations do.
func SetJSON(raw []byte, v any, keys ...string) ([]byte, error) { return setJSON(raw, v, keys...) }

// DeleteJSON removes a top-level key and its value from a record body,
// changing no other byte than the member and the separator before it (the
// one after it, for the first member); an object left empty becomes {}.
// A body without the key is returned as it is.
func DeleteJSON(raw []byte, key string) []byte {
	v := gjson.GetBytes(raw, escapePath(key))
	if !v.Exists() || v.Index <= 0 {
		return raw
	}
	quoted := marshal(key)
	i := v.Index - 1
	for i > 0 && isSpace(raw[i]) {
		i--
	}
	if raw[i] != ':' {
		return raw
	}
	i--
	for i > 0 && isSpace(raw[i]) {
		i--
	}
	start := i + 1 - len(quoted)
	if start < 0 || !bytes.Equal(raw[start:i+1], quoted) {
		return raw
	}
	end := v.Index + len(v.Raw)
	before := start - 1
	for before > 0 && isSpace(raw[before]) {
		before--
	}
	var out []byte
	switch {
	case raw[before] == ',':
		// Not the first member: drop the comma before it and the member.
		out = append(append(out, raw[:before]...), raw[end:]...)
	default:
		// The first member: drop it, the comma after it and the space up
		// to the next member.
		after := end
		for after < len(raw) && isSpace(raw[after]) {
			after++
		}
		if after < len(raw) && raw[after] == ',' {
			after++
			for after < len(raw) && isSpace(raw[after]) {
				after++
			}
			out = append(append(out, raw[:start]...), raw[after:]...)
		} else {
			// The only member: the object is empty now.
			out = append(append(append(out, raw[:before+1]...), '}'), raw[after+1:]...)
		}
	}
	return out
}
