package ocschema

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Record is the kind of a stored record.
type Record uint8

// Record kinds.
const (
	MessageRecord Record = iota // a message: a Message union chosen by "role"
	PartRecord                  // a part: a Part union chosen by "type"
)

func (r Record) String() string {
	if r == PartRecord {
		return "part"
	}
	return "message"
}

// union is the root union of the record kind.
func (r Record) union() *UnionType {
	if r == PartRecord {
		return unions[PartUnion]
	}
	return unions[MessageUnion]
}

// IDs are the ids a store keeps next to a record's body. OpenCode's SQLite
// rows keep them in columns (message.data has no id or sessionID, part.data
// no id, messageID or sessionID) and OpenCode serves the columns' values:
// a non-empty field here replaces the body's key of the same name before
// the check. Leave them empty for bodies that carry their ids (JSON
// storage files, export documents).
type IDs struct {
	ID        string
	SessionID string
	MessageID string // parts only
}

// Kind says what is wrong with a key.
type Kind uint8

// Problem kinds, in the words OpenCode's own messages use.
const (
	Missing        Kind = iota // a required key is absent
	WrongType                  // the value has another JSON type (null included)
	NotInteger                 // a number with a fractional part where an integer is required
	BelowMinimum               // a number below the schema's minimum
	BadPrefix                  // an id without its prefix
	BadValue                   // a string outside the allowed values
	UnknownVariant             // a union's key (role, type, status, name) is missing or not one OpenCode knows
	NotJSON                    // the record is not a JSON object
	Unencodable                // a key the schema allows but OpenCode cannot serve, whatever its value (see Quirks)
)

// Problem is one key of a record that OpenCode's schema rejects.
type Problem struct {
	// Path is the key's gjson/sjson path from the record's root
	// ("state.time.end", "summary.diffs.0.additions"); "" is the record.
	Path string
	Kind Kind
	// Want describes what the schema wants ("string", "integer",
	// `one of "user", "assistant"`).
	Want string
	// Got is the value found, as JSON (shortened); "" when missing.
	Got string
	// Object is the schema type that declares the key ("StepFinishPart",
	// "ToolStateCompleted.time").
	Object string
}

// String is the problem in OpenCode's words, after the path.
func (p Problem) String() string {
	path := p.Path
	if path == "" {
		path = "(record)"
	}
	return path + ": " + p.Message()
}

// Message is the problem without its path, lowercase like OpenCode's
// server messages ("missing key", "expected string, got 5").
func (p Problem) Message() string {
	switch p.Kind {
	case Missing:
		return "missing key"
	case NotInteger:
		return "expected an integer, got " + p.Got
	case BelowMinimum:
		return "expected a value greater than or equal to " + p.Want + ", got " + p.Got
	case BadPrefix:
		return "expected a string starting with " + strconv.Quote(p.Want) + ", got " + p.Got
	case BadValue, UnknownVariant:
		if p.Got == "" {
			return "missing key (expected " + p.Want + ")"
		}
		return "expected " + p.Want + ", got " + p.Got
	case NotJSON:
		return "not a JSON object"
	case Unencodable:
		return "OpenCode " + Version + " cannot serve this key (" + p.Want + ")"
	default:
		return "expected " + p.Want + ", got " + p.Got
	}
}

// VariantOf returns the discriminator of a record body: a message's role, a
// part's type ("" when absent or not a string).
func VariantOf(r Record, data []byte) string {
	v := gjson.GetBytes(data, r.union().Key)
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}

// Check returns every key of a stored record that OpenCode's schema
// rejects, in schema order (OpenCode itself reports only the first one it
// meets). ids fill in the ids a store keeps outside the body. A record
// whose role or type OpenCode does not know gets one UnknownVariant
// problem and no more.
func Check(r Record, data []byte, ids IDs) []Problem {
	if !gjson.ValidBytes(data) {
		return []Problem{{Kind: NotJSON, Want: "object", Got: shorten(string(data))}}
	}
	if ids == (IDs{}) && fits(r, data) {
		return nil
	}
	return check(r, data, ids)
}

// check is the full check: every problem, with its path.
func check(r Record, data []byte, ids IDs) []Problem {
	data = withIDs(r, data, ids)
	// Read in place: no result of the parse outlives this call but what
	// got copies.
	root := gjson.Parse(unsafe.String(unsafe.SliceData(data), len(data)))
	if !root.IsObject() {
		return []Problem{{Kind: NotJSON, Want: "object", Got: shorten(string(data))}}
	}
	var c checker
	c.union(root, r.union(), "", r.String())
	return c.problems
}

// withIDs writes the non-empty ids into the body (a copy).
func withIDs(r Record, data []byte, ids IDs) []byte {
	set := func(key, v string) {
		if v == "" {
			return
		}
		if out, err := sjson.SetBytes(data, key, v); err == nil {
			data = out
		}
	}
	if ids == (IDs{}) {
		return data
	}
	data = append([]byte(nil), data...)
	set("id", ids.ID)
	set("sessionID", ids.SessionID)
	if r == PartRecord {
		set("messageID", ids.MessageID)
	}
	return data
}

type checker struct {
	problems []Problem
}

func (c *checker) add(p Problem) { c.problems = append(c.problems, p) }

func (c *checker) union(v gjson.Result, u *UnionType, path, object string) {
	if !v.IsObject() {
		c.add(Problem{Path: path, Kind: WrongType, Want: "object", Got: got(v), Object: object})
		return
	}
	key := v.Get(EscapeKey(u.Key))
	if key.Type == gjson.String {
		if obj := u.Object(key.Str); obj != "" {
			c.object(v, objects[obj], path)
			return
		}
	}
	want := "one of " + quoteList(u.Values())
	p := Problem{Path: join(path, u.Key), Kind: UnknownVariant, Want: want, Object: u.Name}
	if key.Exists() {
		p.Got = got(key)
	}
	c.add(p)
}

func (c *checker) object(v gjson.Result, obj *ObjectType, path string) {
	// One pass over the object's members, not one lookup per field: a
	// record's text or tool output is read once.
	members := make(map[string]gjson.Result, len(obj.Fields))
	v.ForEach(func(k, fv gjson.Result) bool {
		if _, dup := members[k.Str]; !dup {
			members[k.Str] = fv
		}
		return true
	})
	for i := range obj.Fields {
		f := &obj.Fields[i]
		fv := members[f.Name]
		if u := QuirkFor(obj.Name, f.Name); u != nil && fv.Exists() {
			c.add(Problem{Path: join(path, f.Name), Kind: Unencodable, Want: u.Observed, Got: got(fv), Object: obj.Name})
			continue
		}
		c.field(fv, f, join(path, f.Name), obj.Name)
	}
}

func (c *checker) field(v gjson.Result, f *Field, path, object string) {
	if !v.Exists() {
		if f.Required {
			c.add(Problem{Path: path, Kind: Missing, Want: describe(f), Object: object})
		}
		return
	}
	c.value(v, f.Type, f.Ref, f.Elem, f, path, object)
}

// value checks v against a type; f carries the enum, prefix and minimum of
// a field (nil for items of arrays and maps, which have none).
func (c *checker) value(v gjson.Result, t Type, ref string, elem Type, f *Field, path, object string) {
	wrong := func(want string) {
		c.add(Problem{Path: path, Kind: WrongType, Want: want, Got: got(v), Object: object})
	}
	switch t {
	case Any:
	case String:
		if v.Type != gjson.String {
			wrong("string")
			return
		}
		if f == nil {
			return
		}
		if len(f.Enum) > 0 && !slices.Contains(f.Enum, v.Str) {
			c.add(Problem{Path: path, Kind: BadValue, Want: "one of " + quoteList(f.Enum), Got: got(v), Object: object})
		}
		if f.Prefix != "" && !strings.HasPrefix(v.Str, f.Prefix) {
			c.add(Problem{Path: path, Kind: BadPrefix, Want: f.Prefix, Got: got(v), Object: object})
		}
	case Number, Integer:
		if v.Type != gjson.Number {
			wrong("number")
			return
		}
		if t == Integer && v.Num != math.Trunc(v.Num) {
			c.add(Problem{Path: path, Kind: NotInteger, Want: "integer", Got: got(v), Object: object})
			return
		}
		if f != nil && f.HasMin && v.Num < f.Min {
			c.add(Problem{Path: path, Kind: BelowMinimum, Want: strconv.FormatFloat(f.Min, 'g', -1, 64), Got: got(v), Object: object})
		}
	case Boolean:
		if v.Type != gjson.True && v.Type != gjson.False {
			wrong("boolean")
		}
	case Object:
		if !v.IsObject() {
			wrong("object")
			return
		}
		c.object(v, objects[ref], path)
	case Union:
		c.union(v, unions[ref], path, object)
	case Map:
		if !v.IsObject() {
			wrong("object")
			return
		}
		v.ForEach(func(k, item gjson.Result) bool {
			c.value(item, elem, ref, Any, nil, join(path, k.Str), object)
			return true
		})
	case Array:
		if !v.IsArray() {
			wrong("array")
			return
		}
		for i, item := range v.Array() {
			c.value(item, elem, ref, Any, nil, path+"."+strconv.Itoa(i), object)
		}
	}
}

// describe is the type a field wants, for a missing key.
func describe(f *Field) string {
	switch {
	case len(f.Enum) == 1:
		return strconv.Quote(f.Enum[0])
	case f.Type == Object || f.Type == Union:
		return f.Ref
	default:
		return f.Type.String()
	}
}

// got is a value as found, copied out of the record's bytes.
func got(v gjson.Result) string { return strings.Clone(shorten(v.Raw)) }

func shorten(s string) string {
	const limit = 80
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// join appends a key to a gjson/sjson path.
func join(path, key string) string {
	if path == "" {
		return EscapeKey(key)
	}
	return path + "." + EscapeKey(key)
}

// EscapeKey escapes the characters gjson and sjson treat specially in a
// path component.
func EscapeKey(k string) string {
	if !strings.ContainsAny(k, `.*?|#@\!=<>%`) {
		return k
	}
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?|#@\!=<>%`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
