package fix

// SetJSON sets the value at a path of object keys in a record body, v a Go
// value or json.RawMessage, changing no other byte: an existing value is
// replaced in place (formatted like the body), a missing key is added in
// the body's own formatting. Session surgery (pkg/surgery) edits records
// with it, the way the mutations do.
func SetJSON(raw []byte, v any, keys ...string) ([]byte, error) { return setJSON(raw, v, keys...) }
