package ocschema

import (
	"maps"
	"slices"
)

// Version is the OpenCode release whose record schema this package holds:
// the schema of `opencode-ai@1.18.33` (its server's OpenAPI document) and of
// `@opencode-ai/sdk@1.18.33` (the published types), which agree.
const Version = "1.18.33"

// Type is the JSON type a field must have.
type Type uint8

// Field types. Number accepts any JSON number, Integer only whole ones.
const (
	Any     Type = iota // any JSON value
	String              // a JSON string
	Number              // a JSON number
	Integer             // a JSON number without a fractional part
	Boolean             // true or false
	Object              // an object whose fields Objects[Ref] lists
	Map                 // an object with free keys, each value of type Elem (Ref when Elem is Object or Union)
	Array               // an array, each item of type Elem (Ref when Elem is Object or Union)
	Union               // one of the objects of Unions[Ref], chosen by its key
)

var typeNames = [...]string{"any", "string", "number", "integer", "boolean", "object", "map", "array", "union"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Field is one key of an object type.
type Field struct {
	Name     string
	Required bool
	Type     Type
	// Ref names the object (Objects) or union (Unions) of an Object or Union
	// field, or of the items of an Array or Map field whose Elem is Object or
	// Union.
	Ref string
	// Elem is the type of an Array's items or a Map's values.
	Elem Type
	// Enum lists the only strings allowed (one for a discriminator).
	Enum []string
	// Prefix is the prefix an id string must start with ("msg", "prt",
	// "ses").
	Prefix string
	// HasMin says the number must be at least Min.
	HasMin bool
	Min    float64
}

// ObjectType is an object with a fixed set of keys. Keys it does not list
// are allowed: OpenCode drops them when it serves the record.
type ObjectType struct {
	Name   string
	Fields []Field
}

// Field returns the field named name, or nil.
func (o *ObjectType) Field(name string) *Field {
	for i := range o.Fields {
		if o.Fields[i].Name == name {
			return &o.Fields[i]
		}
	}
	return nil
}

// UnionType is a choice between object types by the string value of Key.
type UnionType struct {
	Name     string
	Key      string
	Variants []Variant
}

// Variant is one member of a union: the objects whose Key is Value.
type Variant struct {
	Value  string
	Object string
}

// Object returns the object type chosen by value, or "" when no variant
// has it.
func (u *UnionType) Object(value string) string {
	for _, v := range u.Variants {
		if v.Value == value {
			return v.Object
		}
	}
	return ""
}

// Values lists the discriminator values in schema order.
func (u *UnionType) Values() []string {
	out := make([]string, len(u.Variants))
	for i, v := range u.Variants {
		out[i] = v.Value
	}
	return out
}

// Roots of the schema: every stored message is a MessageUnion chosen by
// "role", every part a PartUnion chosen by "type".
const (
	MessageUnion = "Message"
	PartUnion    = "Part"
)

// LookupObject returns the object type named name, or nil.
func LookupObject(name string) *ObjectType { return objects[name] }

// LookupUnion returns the union type named name, or nil.
func LookupUnion(name string) *UnionType { return unions[name] }

// ObjectNames lists every object type in the schema, sorted.
func ObjectNames() []string { return slices.Sorted(maps.Keys(objects)) }

// UnionNames lists every union type in the schema, sorted.
func UnionNames() []string { return slices.Sorted(maps.Keys(unions)) }

// FlatField is a field with its dotted path from a record's root, for
// tables: Flatten descends into nested objects but not into unions, arrays
// or maps.
type FlatField struct {
	Path string
	Field
	// Parent is the object type that declares the field.
	Parent string
}

// Flatten lists the fields of object type name and of the objects nested
// in it, depth first, with dotted paths ("time.created").
func Flatten(name string) []FlatField {
	var out []FlatField
	var walk func(obj *ObjectType, prefix string)
	walk = func(obj *ObjectType, prefix string) {
		for _, f := range obj.Fields {
			out = append(out, FlatField{Path: prefix + f.Name, Field: f, Parent: obj.Name})
			if f.Type == Object {
				walk(objects[f.Ref], prefix+f.Name+".")
			}
		}
	}
	if obj := objects[name]; obj != nil {
		walk(obj, "")
	}
	return out
}
