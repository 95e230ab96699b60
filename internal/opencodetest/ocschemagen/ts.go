package ocschemagen

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// The SDK's types.gen.d.ts is written by @hey-api/openapi-ts. Its type
// declarations use a small subset of TypeScript, which this file parses:
// primitives, string literals, object literals (with optional keys and
// index signatures), Array<T>, T[], unions and references to other
// declarations. Anything else in a declaration the schema reaches is an
// error, so a new construct in a later SDK fails loudly.

type tsKind uint8

const (
	tsPrim   tsKind = iota // string, number, boolean, unknown, null
	tsLit                  // "value"
	tsRef                  // Name
	tsObject               // { key: T; key?: T; [key: string]: T; }
	tsArray                // Array<T>
	tsUnion                // A | B
)

type tsType struct {
	kind    tsKind
	name    string // tsPrim: the primitive; tsLit: the value; tsRef: the name
	props   []tsProp
	index   *tsType // tsObject: the value type of an index signature
	elem    *tsType // tsArray
	members []*tsType
}

type tsProp struct {
	name     string
	optional bool
	typ      *tsType
}

// tsDecls finds the `export type Name = …;` declarations of a .d.ts file
// and parses them on demand.
type tsDecls struct {
	src    string
	starts map[string]int // offset of the type expression
	parsed map[string]*tsType
}

var declRe = regexp.MustCompile(`(?m)^export type (\w+) = `)

func newTSDecls(src string) *tsDecls {
	d := &tsDecls{src: src, starts: map[string]int{}, parsed: map[string]*tsType{}}
	for _, m := range declRe.FindAllStringSubmatchIndex(src, -1) {
		d.starts[src[m[2]:m[3]]] = m[1]
	}
	return d
}

// get parses the declaration of name.
func (d *tsDecls) get(name string) (*tsType, error) {
	if t, ok := d.parsed[name]; ok {
		return t, nil
	}
	start, ok := d.starts[name]
	if !ok {
		return nil, fmt.Errorf("the SDK declares no type %s", name)
	}
	p := &tsParser{src: d.src, pos: start}
	t, err := p.parseType()
	if err == nil {
		err = p.expect(";")
	}
	if err != nil {
		return nil, fmt.Errorf("type %s: %w", name, err)
	}
	d.parsed[name] = t
	return t, nil
}

type tsParser struct {
	src string
	pos int
}

func (p *tsParser) skipSpace() {
	for p.pos < len(p.src) {
		switch {
		case unicode.IsSpace(rune(p.src[p.pos])):
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				p.pos = len(p.src)
				return
			}
			p.pos += end + 4
		case strings.HasPrefix(p.src[p.pos:], "//"):
			end := strings.IndexByte(p.src[p.pos:], '\n')
			if end < 0 {
				p.pos = len(p.src)
				return
			}
			p.pos += end + 1
		default:
			return
		}
	}
}

// peek returns the next token without consuming it: an identifier, a
// string literal or one punctuation character.
func (p *tsParser) peek() string {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return ""
	}
	c := p.src[p.pos]
	switch {
	case c == '"':
		end := strings.IndexByte(p.src[p.pos+1:], '"')
		if end < 0 {
			return p.src[p.pos:]
		}
		return p.src[p.pos : p.pos+end+2]
	case c == '_' || c == '$' || unicode.IsLetter(rune(c)):
		i := p.pos
		for i < len(p.src) && (p.src[i] == '_' || p.src[i] == '$' || unicode.IsLetter(rune(p.src[i])) || unicode.IsDigit(rune(p.src[i]))) {
			i++
		}
		return p.src[p.pos:i]
	default:
		return string(c)
	}
}

func (p *tsParser) next() string {
	t := p.peek()
	p.pos += len(t)
	return t
}

func (p *tsParser) expect(tok string) error {
	if got := p.next(); got != tok {
		return p.errorf("expected %q, found %q", tok, got)
	}
	return nil
}

func (p *tsParser) errorf(format string, args ...any) error {
	line := 1 + strings.Count(p.src[:min(p.pos, len(p.src))], "\n")
	return fmt.Errorf("types.gen.d.ts line %d: %s", line, fmt.Sprintf(format, args...))
}

func (p *tsParser) parseType() (*tsType, error) {
	if p.peek() == "|" {
		p.next()
	}
	first, err := p.parsePostfix()
	if err != nil {
		return nil, err
	}
	if p.peek() != "|" {
		return first, nil
	}
	u := &tsType{kind: tsUnion, members: []*tsType{first}}
	for p.peek() == "|" {
		p.next()
		m, err := p.parsePostfix()
		if err != nil {
			return nil, err
		}
		u.members = append(u.members, m)
	}
	return u, nil
}

func (p *tsParser) parsePostfix() (*tsType, error) {
	t, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	for p.peek() == "[" {
		save := p.pos
		p.next()
		if p.peek() != "]" {
			p.pos = save
			break
		}
		p.next()
		t = &tsType{kind: tsArray, elem: t}
	}
	return t, nil
}

func (p *tsParser) parsePrimary() (*tsType, error) {
	tok := p.next()
	switch {
	case tok == "":
		return nil, p.errorf("unexpected end of file")
	case tok == "string" || tok == "number" || tok == "boolean" || tok == "unknown" || tok == "null":
		return &tsType{kind: tsPrim, name: tok}, nil
	case tok[0] == '"':
		return &tsType{kind: tsLit, name: strings.Trim(tok, `"`)}, nil
	case tok == "(":
		t, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return t, p.expect(")")
	case tok == "{":
		return p.parseObject()
	case tok == "Array":
		if err := p.expect("<"); err != nil {
			return nil, err
		}
		elem, err := p.parseType()
		if err != nil {
			return nil, err
		}
		return &tsType{kind: tsArray, elem: elem}, p.expect(">")
	case tok[0] == '_' || unicode.IsLetter(rune(tok[0])):
		if p.peek() == "<" {
			return nil, p.errorf("generic type %s<…> is not supported", tok)
		}
		return &tsType{kind: tsRef, name: tok}, nil
	default:
		return nil, p.errorf("unsupported type syntax %q", tok)
	}
}

func (p *tsParser) parseObject() (*tsType, error) {
	obj := &tsType{kind: tsObject}
	for {
		tok := p.peek()
		switch {
		case tok == "}":
			p.next()
			return obj, nil
		case tok == "[":
			p.next()
			p.next() // key name
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			if err := p.expect("string"); err != nil {
				return nil, err
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			t, err := p.parseType()
			if err != nil {
				return nil, err
			}
			obj.index = t
		default:
			name := p.next()
			if name == "" || !(name[0] == '"' || name[0] == '_' || unicode.IsLetter(rune(name[0]))) {
				return nil, p.errorf("expected a key, found %q", name)
			}
			prop := tsProp{name: strings.Trim(name, `"`)}
			if p.peek() == "?" {
				p.next()
				prop.optional = true
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			t, err := p.parseType()
			if err != nil {
				return nil, err
			}
			prop.typ = t
			obj.props = append(obj.props, prop)
		}
		if err := p.expect(";"); err != nil {
			return nil, err
		}
	}
}
