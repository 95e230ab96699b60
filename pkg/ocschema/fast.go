package ocschema

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"unsafe"
)

// The fast path of Check: one pass over a record's bytes that answers only
// "OpenCode accepts this record". It picks each union's object by its
// discriminator (a part's type, a message's role, a tool state's status)
// before it reads the object's other keys, compares strings in place (a
// string is unescaped only when its value is needed and has an escape, and
// then the record goes to the full check), and allocates nothing. When it
// cannot say yes, for any reason, the full check (checker) runs and names
// the problems: the fast path only ever skips work, it never decides a
// problem, so Check's answers are the full check's.

// Fits reports whether OpenCode accepts the record whose body is data, a
// valid JSON text (gjson.ValidBytes holds: a store's reader validated it),
// leaving out the ids a store may keep outside the body: Check(r, data,
// IDs{}) reports no problem but at the top-level keys id, sessionID and
// messageID, whatever is there (SQLite rows keep them in columns, and a
// body's ids are checked against the store's elsewhere). It reads data once
// and allocates nothing.
//
// false means "not known to fit": Check then says what is wrong, and may
// find nothing but those ids (a body Fits does not read quickly, such as one
// with an escaped key, also gets false).
func Fits(r Record, data []byte) bool {
	s := compiled()
	if s == nil {
		return false
	}
	return s.fits(s.stored[r], data)
}

// fits is Fits with the ids checked: Check(r, data, IDs{}) is nil.
func fits(r Record, data []byte) bool {
	s := compiled()
	if s == nil {
		return false
	}
	return s.fits(s.roots[r], data)
}

func (s *compiledSchema) fits(root *cUnion, data []byte) bool {
	f := fastPath{data: data}
	i := f.space(0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	end, ok := f.union(i, root, 0)
	return ok && f.space(end) == len(data)
}

// storedIDs are the keys Fits leaves out at a record's top level.
var storedIDs = []string{"id", "sessionID", "messageID"}

// fastDepth bounds the nesting the fast path follows; deeper records take
// the full check.
const fastDepth = 64

type cObject struct {
	name     string
	fields   []cField
	required uint64 // bit i: fields[i] is required
	quirky   uint64 // bit i: fields[i] is a key OpenCode cannot serve (Quirks)
}

type cField struct {
	name   string
	typ    Type
	elem   Type
	obj    *cObject // Object, or the items of a Map or Array
	union  *cUnion  // Union, or the items of a Map or Array
	enum   []string
	prefix string
	hasMin bool
	min    float64
}

type cUnion struct {
	key      string
	variants []cVariant
}

type cVariant struct {
	value string
	obj   *cObject
}

type compiledSchema struct {
	roots  [2]*cUnion // by Record
	stored [2]*cUnion // roots whose objects take any top-level id (Fits)
}

var fastSchema *compiledSchema

// compiled is the schema table with its names resolved to pointers, built
// once from the generated table. It is nil when the table has an object the
// fast path cannot follow (more than 64 keys), and every record then takes
// the full check.
func compiled() *compiledSchema { return fastSchema }

func init() { fastSchema = compileSchema() }

func compileSchema() *compiledSchema {
	objs := make(map[string]*cObject, len(objects))
	for name, o := range objects {
		if len(o.Fields) > 64 {
			return nil
		}
		objs[name] = &cObject{name: name}
	}
	uns := make(map[string]*cUnion, len(unions))
	for name, u := range unions {
		cu := &cUnion{key: u.Key}
		for _, v := range u.Variants {
			if objs[v.Object] == nil {
				return nil
			}
			cu.variants = append(cu.variants, cVariant{value: v.Value, obj: objs[v.Object]})
		}
		uns[name] = cu
	}
	for name, o := range objects {
		co := objs[name]
		for i, f := range o.Fields {
			cf := cField{name: f.Name, typ: f.Type, elem: f.Elem, enum: f.Enum, prefix: f.Prefix, hasMin: f.HasMin, min: f.Min}
			ref := f.Type
			if f.Type == Map || f.Type == Array {
				ref = f.Elem
			}
			switch ref {
			case Object:
				if cf.obj = objs[f.Ref]; cf.obj == nil {
					return nil
				}
			case Union:
				if cf.union = uns[f.Ref]; cf.union == nil {
					return nil
				}
			}
			if f.Required {
				co.required |= 1 << i
			}
			if QuirkFor(name, f.Name) != nil {
				co.quirky |= 1 << i
			}
			co.fields = append(co.fields, cf)
		}
	}
	s := &compiledSchema{}
	s.roots[MessageRecord], s.roots[PartRecord] = uns[MessageUnion], uns[PartUnion]
	if s.roots[MessageRecord] == nil || s.roots[PartRecord] == nil {
		return nil
	}
	for r, u := range s.roots {
		s.stored[r] = withoutIDs(u)
	}
	return s
}

// withoutIDs is a copy of union u whose objects accept anything, or
// nothing, at the keys storedIDs.
func withoutIDs(u *cUnion) *cUnion {
	out := &cUnion{key: u.key}
	for _, v := range u.variants {
		o := *v.obj
		o.fields = slices.Clone(o.fields)
		for i := range o.fields {
			if slices.Contains(storedIDs, o.fields[i].name) {
				o.fields[i] = cField{name: o.fields[i].name, typ: Any}
				o.required &^= 1 << i
				o.quirky &^= 1 << i
			}
		}
		out.variants = append(out.variants, cVariant{value: v.value, obj: &o})
	}
	return out
}

type fastPath struct {
	data []byte
}

func (f *fastPath) space(i int) int {
	for i < len(f.data) {
		switch f.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str returns the end of the string whose opening quote is at i (just past
// the closing quote).
func (f *fastPath) str(i int) (int, bool) {
	d := f.data
	j := i + 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		// A quote ends the string unless an odd run of backslashes
		// precedes it.
		n := 0
		for b := q - 1; b > i && d[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// plain returns the contents of the string at i..end when it has no escape
// (its bytes are then its value).
func (f *fastPath) plain(i, end int) ([]byte, bool) {
	s := f.data[i+1 : end-1]
	return s, bytes.IndexByte(s, '\\') < 0
}

// skip returns the end of the value starting at i.
func (f *fastPath) skip(i int) (int, bool) {
	d := f.data
	if i >= len(d) {
		return 0, false
	}
	switch c := d[i]; {
	case c == '"':
		return f.str(i)
	case c == '{' || c == '[':
		depth := 0
		for i < len(d) {
			switch d[i] {
			case '"':
				end, ok := f.str(i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	case c == 't':
		return f.literal(i, "true")
	case c == 'f':
		return f.literal(i, "false")
	case c == 'n':
		return f.literal(i, "null")
	default:
		return f.number(i)
	}
}

func (f *fastPath) literal(i int, lit string) (int, bool) {
	if len(f.data)-i < len(lit) || string(f.data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

func (f *fastPath) number(i int) (int, bool) {
	d := f.data
	j := i
	for j < len(d) {
		switch c := d[j]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			j++
			continue
		}
		break
	}
	if j == i {
		return 0, false
	}
	return j, true
}

// member reads the member at i (a key's opening quote): the key's bytes and
// where its value starts.
func (f *fastPath) member(i int) (key []byte, val int, ok bool) {
	d := f.data
	if i >= len(d) || d[i] != '"' {
		return nil, 0, false
	}
	end, ok := f.str(i)
	if !ok {
		return nil, 0, false
	}
	if key, ok = f.plain(i, end); !ok {
		// An escaped key may unescape to a schema key: full check.
		return nil, 0, false
	}
	j := f.space(end)
	if j >= len(d) || d[j] != ':' {
		return nil, 0, false
	}
	return key, f.space(j + 1), true
}

// next moves past the value ending at end to the next member: more is
// false at the object's closing brace, whose end is returned.
func (f *fastPath) next(end int) (i int, more, ok bool) {
	d := f.data
	j := f.space(end)
	if j >= len(d) {
		return 0, false, false
	}
	switch d[j] {
	case ',':
		return f.space(j + 1), true, true
	case '}':
		return j + 1, false, true
	}
	return 0, false, false
}

// pending is a member read before its object's discriminator.
type pending struct {
	key []byte
	val int
}

// union checks the object at i (an opening brace) against union u: it
// finds the discriminator first, keeping the members before it, then
// checks the chosen object's members in order.
func (f *fastPath) union(i int, u *cUnion, depth int) (int, bool) {
	if depth > fastDepth {
		return 0, false
	}
	var early [32]pending
	n := 0
	j := f.space(i + 1)
	if j < len(f.data) && f.data[j] == '}' {
		return 0, false // no discriminator
	}
	var obj *cObject
	more := true
	for obj == nil {
		key, val, ok := f.member(j)
		if !ok {
			return 0, false
		}
		if string(key) == u.key {
			if val >= len(f.data) || f.data[val] != '"' {
				return 0, false
			}
			end, ok := f.str(val)
			if !ok {
				return 0, false
			}
			v, ok := f.plain(val, end)
			if !ok {
				return 0, false
			}
			for k := range u.variants {
				if string(v) == u.variants[k].value {
					obj = u.variants[k].obj
					break
				}
			}
			if obj == nil {
				return 0, false
			}
			// The key itself is one of the object's fields: checked below
			// with the others, in document order.
			if n == len(early) {
				return 0, false
			}
			early[n] = pending{key, val}
			n++
			if j, more, ok = f.next(end); !ok {
				return 0, false
			}
			break
		}
		if n == len(early) {
			return 0, false
		}
		end, ok := f.skip(val)
		if !ok {
			return 0, false
		}
		early[n] = pending{key, val}
		n++
		if j, more, ok = f.next(end); !ok || !more {
			return 0, false // no discriminator
		}
	}
	var seen uint64
	for _, p := range early[:n] {
		if _, ok := f.field(obj, p.key, p.val, &seen, depth); !ok {
			return 0, false
		}
	}
	if !more {
		// The discriminator was the last member: j is past the object.
		return j, seen&obj.required == obj.required
	}
	return f.members(obj, j, &seen, depth)
}

// object checks the object at i (an opening brace) against obj.
func (f *fastPath) object(i int, obj *cObject, depth int) (int, bool) {
	if depth > fastDepth {
		return 0, false
	}
	j := f.space(i + 1)
	var seen uint64
	if j < len(f.data) && f.data[j] == '}' {
		return j + 1, obj.required == 0
	}
	return f.members(obj, j, &seen, depth)
}

// members checks the members of obj from j (a key's opening quote) to the
// object's end.
func (f *fastPath) members(obj *cObject, j int, seen *uint64, depth int) (int, bool) {
	for {
		key, val, ok := f.member(j)
		if !ok {
			return 0, false
		}
		end, ok := f.field(obj, key, val, seen, depth)
		if !ok {
			return 0, false
		}
		more := false
		if j, more, ok = f.next(end); !ok {
			return 0, false
		}
		if !more {
			return j, *seen&obj.required == obj.required
		}
	}
}

// field checks one member of obj: its value against the field of that
// name (the first member of a name counts, as in the full check; keys the
// schema does not list are skipped).
func (f *fastPath) field(obj *cObject, key []byte, val int, seen *uint64, depth int) (int, bool) {
	for k := range obj.fields {
		fd := &obj.fields[k]
		if string(key) != fd.name {
			continue
		}
		bit := uint64(1) << k
		if *seen&bit != 0 {
			break // a later duplicate: OpenCode reads the first
		}
		*seen |= bit
		if obj.quirky&bit != 0 {
			return 0, false
		}
		return f.value(val, fd.typ, fd, depth)
	}
	return f.skip(val)
}

// value checks the value at i against field fd: its type, enum, prefix
// and minimum.
func (f *fastPath) value(i int, t Type, fd *cField, depth int) (int, bool) {
	d := f.data
	if i >= len(d) {
		return 0, false
	}
	switch t {
	case String:
		if d[i] != '"' {
			return 0, false
		}
		end, ok := f.str(i)
		if !ok {
			return 0, false
		}
		if len(fd.enum) > 0 || fd.prefix != "" {
			s, plain := f.plain(i, end)
			if !plain {
				return 0, false
			}
			if len(fd.enum) > 0 && !inList(s, fd.enum) {
				return 0, false
			}
			if fd.prefix != "" && (len(s) < len(fd.prefix) || string(s[:len(fd.prefix)]) != fd.prefix) {
				return 0, false
			}
		}
		return end, true
	case Number, Integer:
		return f.num(i, t == Integer, fd.hasMin, fd.min)
	case Map:
		if d[i] != '{' {
			return 0, false
		}
		return f.mapValues(i, fd, depth+1)
	case Array:
		if d[i] != '[' {
			return 0, false
		}
		return f.arrayItems(i, fd, depth+1)
	}
	return f.item(i, t, fd, depth)
}

// item checks the value at i against type t with none of a field's
// constraints but its references: an item of an array or a map.
func (f *fastPath) item(i int, t Type, fd *cField, depth int) (int, bool) {
	d := f.data
	if i >= len(d) {
		return 0, false
	}
	c := d[i]
	switch t {
	case Any:
		return f.skip(i)
	case String:
		if c != '"' {
			return 0, false
		}
		return f.str(i)
	case Number, Integer:
		return f.num(i, t == Integer, false, 0)
	case Boolean:
		if c == 't' {
			return f.literal(i, "true")
		}
		if c == 'f' {
			return f.literal(i, "false")
		}
		return 0, false
	case Object:
		if c != '{' {
			return 0, false
		}
		return f.object(i, fd.obj, depth+1)
	case Union:
		if c != '{' {
			return 0, false
		}
		return f.union(i, fd.union, depth+1)
	case Map:
		if c != '{' {
			return 0, false
		}
		return f.skip(i)
	case Array:
		if c != '[' {
			return 0, false
		}
		return f.skip(i)
	}
	return 0, false
}

// num checks the number at i: whole when integer is set, at least min
// when hasMin is.
func (f *fastPath) num(i int, integer, hasMin bool, min float64) (int, bool) {
	d := f.data
	if c := d[i]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	end, ok := f.number(i)
	if !ok {
		return 0, false
	}
	if !integer && !hasMin {
		return end, true
	}
	raw := d[i:end]
	if plainDigits(raw) && (!hasMin || min <= 0) {
		// Whole and not negative.
		return end, true
	}
	n, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), 64)
	if integer && n != math.Trunc(n) {
		return 0, false
	}
	if hasMin && n < min {
		return 0, false
	}
	return end, true
}

func (f *fastPath) mapValues(i int, fd *cField, depth int) (int, bool) {
	if fd.elem == Any {
		return f.skip(i)
	}
	j := f.space(i + 1)
	if j < len(f.data) && f.data[j] == '}' {
		return j + 1, true
	}
	for {
		_, val, ok := f.member(j)
		if !ok {
			return 0, false
		}
		end, ok := f.item(val, fd.elem, fd, depth)
		if !ok {
			return 0, false
		}
		more := false
		if j, more, ok = f.next(end); !ok {
			return 0, false
		}
		if !more {
			return j, true
		}
	}
}

func (f *fastPath) arrayItems(i int, fd *cField, depth int) (int, bool) {
	if fd.elem == Any {
		return f.skip(i)
	}
	d := f.data
	j := f.space(i + 1)
	if j < len(d) && d[j] == ']' {
		return j + 1, true
	}
	for {
		end, ok := f.item(j, fd.elem, fd, depth)
		if !ok {
			return 0, false
		}
		j = f.space(end)
		if j >= len(d) {
			return 0, false
		}
		switch d[j] {
		case ',':
			j = f.space(j + 1)
		case ']':
			return j + 1, true
		default:
			return 0, false
		}
	}
}

func inList(s []byte, list []string) bool {
	for _, v := range list {
		if string(s) == v {
			return true
		}
	}
	return false
}

// plainDigits reports whether a number is a non-negative integer written
// without fraction or exponent: whole, and at least 0.
func plainDigits(raw []byte) bool {
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(raw) > 0
}
