package scan

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/ocschema"
	"github.com/sessfix/sessfix/pkg/opencode"
)

// SchemaOf is opencode.SessionSchema for the session (SF202 checks the
// ids' format and SF203 a body that disagrees), computed once per
// CheckSession and shared by the rules.
func (c *Context) SchemaOf() []*opencode.RecordSchema {
	cc := c.shared()
	if !cc.schemaDone {
		cc.schema = opencode.SessionSchema(c.Session)
		cc.schemaDone = true
	}
	return cc.schema
}

// reportKeys reports each record whose problems of one kind (keys picks
// them: the keys SF206 fills, those SF208 cannot serve) are not empty:
// "<kind> " + verb + " <keys>, " + why, with OpenCode's error for the
// first key. SF206 and SF208 differ only in those.
func reportKeys(c *Context, keys func(*opencode.RecordSchema) []ocschema.Problem, verb, why string) {
	for _, r := range c.SchemaOf() {
		ps := keys(r)
		if len(ps) == 0 {
			continue
		}
		f := At(r.Message, r.Part)
		f.Message = r.Kind() + " " + verb + " " + keyList(ps) + ", " + why
		f.ProviderError = r.OpenCodeError(ps[0])
		c.Report(f)
	}
}

// keyList names the keys of problems for a finding: "agent, model and
// time".
func keyList(ps []ocschema.Problem) string {
	keys := make([]string, 0, len(ps))
	for _, p := range ps {
		k := p.Path
		if k == "" {
			k = "(the record)"
		}
		keys = append(keys, k)
	}
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return keys[0]
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " and " + keys[len(keys)-1]
}
