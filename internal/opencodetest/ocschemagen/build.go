package ocschemagen

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/ocschema"
)

// Schema is the record schema built from the two machine-readable sources:
// which keys exist, which are required and their JSON types come from the
// SDK's types; the finer checks the SDK's TypeScript cannot express
// (integer versus number, a minimum, an id's prefix) come from the server's
// OpenAPI document. Build fails when the two disagree on any key, on
// whether it is required or on its type.
type Schema struct {
	Objects map[string]*ocschema.ObjectType
	Unions  map[string]*ocschema.UnionType
}

type oaSchema = map[string]any

type builder struct {
	ts      *tsDecls
	oa      map[string]oaSchema
	out     Schema
	visited map[string]bool
}

// Build walks the SDK's Message and Part types and the OpenAPI document's
// schemas of the same names side by side.
func Build(sdkTypes []byte, openapi *OpenAPI) (*Schema, error) {
	b := &builder{
		ts:      newTSDecls(string(sdkTypes)),
		oa:      openapi.Schemas,
		out:     Schema{Objects: map[string]*ocschema.ObjectType{}, Unions: map[string]*ocschema.UnionType{}},
		visited: map[string]bool{},
	}
	for _, root := range []string{ocschema.MessageUnion, ocschema.PartUnion} {
		if _, err := b.field(&tsType{kind: tsRef, name: root}, oaSchema{"$ref": "#/components/schemas/" + root}, root); err != nil {
			return nil, err
		}
		if b.out.Unions[root] == nil {
			return nil, fmt.Errorf("%s is not a union in the SDK", root)
		}
	}
	return &b.out, nil
}

// resolve follows an OpenAPI $ref.
func (b *builder) resolve(s oaSchema) (oaSchema, string, error) {
	ref, _ := s["$ref"].(string)
	if ref == "" {
		return s, "", nil
	}
	name := strings.TrimPrefix(ref, "#/components/schemas/")
	target, ok := b.oa[name]
	if !ok {
		return nil, "", fmt.Errorf("the OpenAPI document has no schema %s", name)
	}
	return target, name, nil
}

// field turns a TypeScript type and the matching OpenAPI schema into a
// field's type. name names the object or union when the type is an inline
// one ("UserMessage.time").
func (b *builder) field(t *tsType, s oaSchema, name string) (ocschema.Field, error) {
	s, _, err := b.resolve(s)
	if err != nil {
		return ocschema.Field{}, err
	}
	if t.kind == tsRef {
		decl, err := b.ts.get(t.name)
		if err != nil {
			return ocschema.Field{}, err
		}
		return b.field(decl, s, t.name)
	}
	switch t.kind {
	case tsPrim:
		return b.prim(t.name, s, name)
	case tsLit:
		enum, err := oaEnum(s)
		if err != nil || !slices.Equal(enum, []string{t.name}) {
			return ocschema.Field{}, fmt.Errorf("%s: the SDK says %q, the OpenAPI document %v", name, t.name, s)
		}
		return ocschema.Field{Type: ocschema.String, Enum: []string{t.name}}, nil
	case tsArray:
		if oaType(s) != "array" {
			return ocschema.Field{}, fmt.Errorf("%s: the SDK says an array, the OpenAPI document %v", name, s)
		}
		items, _ := s["items"].(oaSchema)
		elem, err := b.field(t.elem, items, name+"[]")
		if err != nil {
			return ocschema.Field{}, err
		}
		return container(ocschema.Array, elem, name)
	case tsObject:
		if t.index != nil && len(t.props) == 0 {
			// An empty struct in the server's schema ("properties": {})
			// accepts any object too.
			if props, _ := s["properties"].(oaSchema); oaType(s) != "object" || len(props) != 0 || s["required"] != nil {
				return ocschema.Field{}, fmt.Errorf("%s: the SDK says a map, the OpenAPI document %v", name, s)
			}
			vs, _ := s["additionalProperties"].(oaSchema)
			if vs == nil {
				vs = oaSchema{}
			}
			elem, err := b.field(t.index, vs, name+"{}")
			if err != nil {
				return ocschema.Field{}, err
			}
			return container(ocschema.Map, elem, name)
		}
		if t.index != nil {
			return ocschema.Field{}, fmt.Errorf("%s: an object with both keys and an index signature is not supported", name)
		}
		return ocschema.Field{Type: ocschema.Object, Ref: name}, b.object(t, s, name)
	case tsUnion:
		if enum, ok := literalUnion(t); ok {
			got, err := oaEnum(s)
			if err != nil || !slices.Equal(got, enum) {
				return ocschema.Field{}, fmt.Errorf("%s: the SDK says %v, the OpenAPI document %v", name, enum, s)
			}
			return ocschema.Field{Type: ocschema.String, Enum: enum}, nil
		}
		return ocschema.Field{Type: ocschema.Union, Ref: name}, b.union(t, s, name)
	}
	return ocschema.Field{}, fmt.Errorf("%s: unsupported SDK type", name)
}

func (b *builder) prim(prim string, s oaSchema, name string) (ocschema.Field, error) {
	got := oaType(s)
	var f ocschema.Field
	switch {
	case prim == "string" && got == "string":
		f.Type = ocschema.String
		if pat, ok := s["pattern"].(string); ok {
			m := prefixPattern.FindStringSubmatch(pat)
			if m == nil {
				return f, fmt.Errorf("%s: pattern %q is not an id prefix", name, pat)
			}
			f.Prefix = m[1]
		}
	case prim == "number" && (got == "number" || got == "integer"):
		f.Type = ocschema.Number
		if got == "integer" {
			f.Type = ocschema.Integer
		}
		if m, ok := s["minimum"].(float64); ok {
			f.HasMin, f.Min = true, m
		}
	case prim == "boolean" && got == "boolean":
		f.Type = ocschema.Boolean
	case prim == "unknown" && len(s) == 0:
		f.Type = ocschema.Any
	default:
		return f, fmt.Errorf("%s: the SDK says %s, the OpenAPI document %v", name, prim, s)
	}
	for k := range s {
		switch k {
		case "type", "pattern", "minimum", "description":
		default:
			return f, fmt.Errorf("%s: OpenAPI keyword %q is not supported", name, k)
		}
	}
	return f, nil
}

var prefixPattern = regexp.MustCompile(`^\^([a-z]+)$`)

// container makes an Array or Map field of elem, whose own constraints
// cannot be carried.
func container(kind ocschema.Type, elem ocschema.Field, name string) (ocschema.Field, error) {
	if elem.Type == ocschema.Array || elem.Type == ocschema.Map || elem.Enum != nil || elem.Prefix != "" || elem.HasMin {
		return ocschema.Field{}, fmt.Errorf("%s: nested constraints on items are not supported", name)
	}
	return ocschema.Field{Type: kind, Elem: elem.Type, Ref: elem.Ref}, nil
}

func (b *builder) object(t *tsType, s oaSchema, name string) error {
	if b.visited[name] {
		return nil
	}
	b.visited[name] = true
	if oaType(s) != "object" {
		return fmt.Errorf("%s: the SDK says an object, the OpenAPI document %v", name, s)
	}
	props, _ := s["properties"].(oaSchema)
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			required[r.(string)] = true
		}
	}
	obj := &ocschema.ObjectType{Name: name}
	var tsNames []string
	for _, p := range t.props {
		tsNames = append(tsNames, p.name)
		ps, ok := props[p.name].(oaSchema)
		if !ok {
			return fmt.Errorf("%s.%s: in the SDK, not in the OpenAPI document", name, p.name)
		}
		if required[p.name] == p.optional {
			return fmt.Errorf("%s.%s: the SDK says optional=%v, the OpenAPI document required=%v", name, p.name, p.optional, required[p.name])
		}
		f, err := b.field(p.typ, ps, name+"."+p.name)
		if err != nil {
			return err
		}
		f.Name, f.Required = p.name, !p.optional
		obj.Fields = append(obj.Fields, f)
	}
	var oaNames []string
	for k := range props {
		oaNames = append(oaNames, k)
	}
	sort.Strings(oaNames)
	sorted := slices.Sorted(slices.Values(tsNames))
	if !slices.Equal(sorted, oaNames) {
		return fmt.Errorf("%s: the SDK has keys %v, the OpenAPI document %v", name, sorted, oaNames)
	}
	b.out.Objects[name] = obj
	return nil
}

func (b *builder) union(t *tsType, s oaSchema, name string) error {
	if b.visited[name] {
		return nil
	}
	b.visited[name] = true
	anyOf, _ := s["anyOf"].([]any)
	if len(anyOf) != len(t.members) {
		return fmt.Errorf("%s: the SDK has %d members, the OpenAPI document %d", name, len(t.members), len(anyOf))
	}
	var objs []string
	for i, m := range t.members {
		ms, _ := anyOf[i].(oaSchema)
		f, err := b.field(m, ms, fmt.Sprintf("%s#%d", name, i))
		if err != nil {
			return err
		}
		if f.Type != ocschema.Object {
			return fmt.Errorf("%s: member %d is not an object", name, i)
		}
		objs = append(objs, f.Ref)
	}
	key, values, err := b.discriminator(objs)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	u := &ocschema.UnionType{Name: name, Key: key}
	for i, o := range objs {
		u.Variants = append(u.Variants, ocschema.Variant{Value: values[i], Object: o})
	}
	b.out.Unions[name] = u
	return nil
}

// discriminator finds the key every member requires as one string literal,
// with a different literal each.
func (b *builder) discriminator(objs []string) (string, []string, error) {
	first := b.out.Objects[objs[0]]
	for _, cand := range first.Fields {
		values := make([]string, 0, len(objs))
		seen := map[string]bool{}
		for _, o := range objs {
			f := b.out.Objects[o].Field(cand.Name)
			if f == nil || !f.Required || len(f.Enum) != 1 || seen[f.Enum[0]] {
				break
			}
			seen[f.Enum[0]] = true
			values = append(values, f.Enum[0])
		}
		if len(values) == len(objs) {
			return cand.Name, values, nil
		}
	}
	return "", nil, fmt.Errorf("no key tells the members %v apart", objs)
}

func literalUnion(t *tsType) ([]string, bool) {
	var out []string
	for _, m := range t.members {
		if m.kind != tsLit {
			return nil, false
		}
		out = append(out, m.name)
	}
	return out, true
}

func oaType(s oaSchema) string {
	t, _ := s["type"].(string)
	return t
}

func oaEnum(s oaSchema) ([]string, error) {
	raw, ok := s["enum"].([]any)
	if !ok || oaType(s) != "string" {
		return nil, fmt.Errorf("not a string enum: %v", s)
	}
	out := make([]string, len(raw))
	for i, v := range raw {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("non-string enum value %v", v)
		}
		out[i] = str
	}
	return out, nil
}

// OpenAPI is the part of OpenCode's server OpenAPI document that describes
// stored records: the component schemas reachable from Message and Part.
type OpenAPI struct {
	// OpenCode is the release that served the document.
	OpenCode string `json:"opencode"`
	// Source says how it was captured.
	Source  string              `json:"source"`
	Schemas map[string]oaSchema `json:"schemas"`
}

// SubsetOpenAPI extracts the schemas reachable from Message and Part from a
// full OpenAPI document (what `GET /doc` of `opencode serve` returns).
func SubsetOpenAPI(doc []byte, version string) (*OpenAPI, error) {
	var full struct {
		Components struct {
			Schemas map[string]oaSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &full); err != nil {
		return nil, fmt.Errorf("OpenAPI document: %w", err)
	}
	out := &OpenAPI{OpenCode: version, Source: "GET /doc of `opencode serve`", Schemas: map[string]oaSchema{}}
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/components/schemas/")
				if _, done := out.Schemas[name]; !done {
					s, ok := full.Components.Schemas[name]
					if !ok {
						return fmt.Errorf("OpenAPI document: no schema %s", name)
					}
					out.Schemas[name] = s
					if err := walk(s); err != nil {
						return err
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if err := walk(x[k]); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, root := range []string{ocschema.MessageUnion, ocschema.PartUnion} {
		if err := walk(map[string]any{"$ref": "#/components/schemas/" + root}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Marshal writes the subset as indented JSON with sorted keys.
func (o *OpenAPI) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ParseOpenAPI reads a subset written by Marshal.
func ParseOpenAPI(b []byte) (*OpenAPI, error) {
	var o OpenAPI
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, err
	}
	if len(o.Schemas) == 0 {
		return nil, fmt.Errorf("no schemas")
	}
	return &o, nil
}
