package opencode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/ocschema"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// What OpenCode's own schema says about a session's records (scan's schema
// rules report it): pkg/ocschema holds the schema of OpenCode 1.18.33 and the
// defaults; this file runs it over a loaded session, the way OpenCode's
// server checks what it serves.

// RecordSchema is ocschema's verdict on one stored message or part.
type RecordSchema struct {
	Message *store.Message
	Part    *store.Part // nil for the message itself
	// Where is the record in OpenCode's answer to GET /session/:id/message:
	// [i]["info"] for message i, [i]["parts"][j] for its part j.
	Where string
	// Filled are the missing (or null) keys a backfill gives the value
	// OpenCode writes for them; Left is everything else the schema rejects,
	// but for what sortProblems leaves to other checks; Unservable are keys
	// OpenCode cannot serve at all.
	Filled, Left, Unservable []ocschema.Problem
	// Body is the record with Filled backfilled (the record's own bytes
	// when nothing is filled).
	Body []byte
}

// Record is the checked record.
func (r *RecordSchema) Record() *store.Record {
	if r.Part != nil {
		return &r.Part.Record
	}
	return &r.Message.Record
}

// Kind is "message" or "part", as in finding messages ("user message",
// "tool part").
func (r *RecordSchema) Kind() string {
	if r.Part != nil {
		return r.Part.Type + " part"
	}
	return r.Message.Role + " message"
}

// OpenCodeError is the 400 answer OpenCode gives for a problem of this
// record, when it is the first one it meets: "Missing key at
// [0]["info"]["agent"]".
func (r *RecordSchema) OpenCodeError(p ocschema.Problem) string {
	path := p.Path
	if p.Kind == ocschema.UnknownVariant {
		// A union's unknown key is reported at the union.
		path = parentPath(path)
	}
	return openCodeMessage(p) + " at " + r.Where + openCodePath(path)
}

// SessionSchema checks every message and part of the session against
// OpenCode's schema and returns the records with any problem, in
// OpenCode's order. Ids are not checked here: OpenCode serves those the
// store keeps outside the body (SQLite columns), the record's location
// gives them in the other shapes, and scan's rules check their format and
// a body that disagrees.
func SessionSchema(s *store.Session) []*RecordSchema {
	var out []*RecordSchema
	for i, m := range s.Messages {
		if r := recordSchema(m, nil, i, 0); r != nil {
			out = append(out, r)
		}
		for j, p := range m.Parts {
			if r := recordSchema(m, p, i, j); r != nil {
				out = append(out, r)
			}
		}
	}
	return completeSchema(s, out)
}

// recordSchema checks one message (p nil) or part against the schema: nil
// when it fits. Most records fit; ocschema.Fits says so in one pass over
// the body, without the full check's paths and copies.
func recordSchema(m *store.Message, p *store.Part, i, j int) *RecordSchema {
	kind, rec := ocschema.MessageRecord, &m.Record
	if p != nil {
		kind, rec = ocschema.PartRecord, &p.Record
	}
	// A body the reader validated is not validated again; one built or
	// edited in memory is.
	if (rec.Validated() || gjson.ValidBytes(rec.Raw)) && ocschema.Fits(kind, rec.Raw) {
		return nil
	}
	ps := ocschema.Check(kind, rec.Raw, ocschema.IDs{})
	if len(ps) == 0 {
		return nil
	}
	where := "[" + strconv.Itoa(i) + "]"
	if p == nil {
		return &RecordSchema{Message: m, Where: where + `["info"]`, Left: ps}
	}
	return &RecordSchema{Message: m, Part: p, Where: where + `["parts"][` + strconv.Itoa(j) + "]", Left: ps}
}

// completeSchema sorts the problems of the records recordSchema found,
// backfills what it can and keeps the records left with a problem.
func completeSchema(s *store.Session, found []*RecordSchema) []*RecordSchema {
	var out []*RecordSchema
	var fill *schemaContexts
	for _, r := range found {
		r.Body = r.Record().Raw
		r.Left, r.Unservable = sortProblems(s, r)
		if anyFillable(r.Left) {
			if fill == nil {
				fill = newSchemaContexts(s)
			}
			r.Body, r.Filled, r.Left = fill.backfill(r)
			r.Left, _ = sortProblems(s, &RecordSchema{Message: r.Message, Part: r.Part, Left: r.Left})
		}
		// Problems only at what other rules own are not the schema's.
		if len(r.Filled)+len(r.Left)+len(r.Unservable) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// sortProblems drops the problems scan's rules on part types, ids and
// parents report on their own and splits off the unservable keys. Left to
// those: a part whose type OpenCode does not have, an id without its prefix
// and a parentID that names no message of the session.
func sortProblems(s *store.Session, r *RecordSchema) (left, unservable []ocschema.Problem) {
	for _, p := range r.Left {
		switch {
		case p.Kind == ocschema.Unencodable:
			unservable = append(unservable, p)
		case r.Part != nil && p.Path == "type" && p.Kind == ocschema.UnknownVariant && r.Part.Type != "":
		case p.Path == "id" || p.Path == "sessionID" || p.Path == "messageID":
			// OpenCode serves the ids where the store keeps them (columns,
			// paths), whose format and agreement with the body scan's id
			// rules check.
		case r.Part == nil && p.Path == "parentID" && p.Kind == ocschema.BadPrefix && s.Message(r.Message.Get("parentID").String()) == nil:
		default:
			left = append(left, p)
		}
	}
	return left, unservable
}

func anyFillable(ps []ocschema.Problem) bool {
	for _, p := range ps {
		if p.Kind == ocschema.Missing || p.Kind == ocschema.WrongType && p.Got == "null" {
			return true
		}
	}
	return false
}

func messageIDs(m *store.Message) ocschema.IDs {
	return ocschema.IDs{ID: m.ID, SessionID: m.SessionID}
}

func partIDs(m *store.Message, p *store.Part) ocschema.IDs {
	return ocschema.IDs{ID: p.ID, SessionID: m.SessionID, MessageID: m.ID}
}

// schemaContexts are the backfill contexts of a session's records.
type schemaContexts struct {
	msgs  map[*store.Message]ocschema.Context
	parts map[*store.Part]ocschema.Context
}

func newSchemaContexts(s *store.Session) *schemaContexts {
	rows := make([]ocschema.MessageRow, len(s.Messages))
	for i, m := range s.Messages {
		near := m.Modified
		if m.Created > 0 {
			near = time.UnixMilli(m.Created)
		}
		rows[i] = ocschema.MessageRow{Row: ocschema.Row{ID: m.ID, Created: created(m.ID, m.Created, near), Body: m.Raw}}
		for _, p := range m.Parts {
			rows[i].Parts = append(rows[i].Parts, ocschema.Row{ID: p.ID, Created: created(p.ID, 0, near), Body: p.Raw})
		}
	}
	mc, pc := ocschema.SessionContexts(SessionInfoOf(s), rows)
	c := &schemaContexts{msgs: map[*store.Message]ocschema.Context{}, parts: map[*store.Part]ocschema.Context{}}
	for i, m := range s.Messages {
		c.msgs[m] = mc[i]
		for j, p := range m.Parts {
			c.parts[p] = pc[i][j]
		}
	}
	return c
}

// created is a record's creation time in epoch milliseconds: the row's or
// the body's time (given), else the time in its id read near its message's
// time, else its message's time. A part row's time_created is not loaded;
// the time in its id is the same instant.
func created(id string, given int64, near time.Time) int64 {
	if given > 0 {
		return given
	}
	ref := near
	if ref.IsZero() {
		ref = time.Now()
	}
	if t, ok := store.IDTime(id, ref); ok && t.UnixMilli() > 0 {
		return t.UnixMilli()
	}
	if !near.IsZero() && near.UnixMilli() > 0 {
		return near.UnixMilli()
	}
	return 0
}

// backfill fills the record's missing keys until no default applies any
// more (filling an object can reveal a missing key inside it).
func (c *schemaContexts) backfill(r *RecordSchema) (out []byte, filled, left []ocschema.Problem) {
	kind, ids, ctx := ocschema.MessageRecord, messageIDs(r.Message), c.msgs[r.Message]
	if r.Part != nil {
		kind, ids, ctx = ocschema.PartRecord, partIDs(r.Message, r.Part), c.parts[r.Part]
	}
	out = r.Record().Raw
	for range 4 {
		next, f, l := ocschema.Backfill(kind, out, ids, ctx)
		left = l
		if len(f) == 0 {
			break
		}
		out, filled = next, append(filled, f...)
	}
	return out, filled, left
}

// SchemaOfRecord is the schema verdict on one message (p nil) or part of
// the session, or nil when it fits. Only that record is checked; the
// session is read only for what a backfill derives from it.
func SchemaOfRecord(s *store.Session, m *store.Message, p *store.Part) *RecordSchema {
	for i, sm := range s.Messages {
		if sm != m {
			continue
		}
		j := 0
		if p != nil {
			if j = slices.Index(m.Parts, p); j < 0 {
				return nil
			}
		}
		r := recordSchema(m, p, i, j)
		if r == nil {
			return nil
		}
		if out := completeSchema(s, []*RecordSchema{r}); len(out) > 0 {
			return out[0]
		}
		return nil
	}
	return nil
}

// FillValue is the value a backfill writes for one of Filled, as compact
// JSON with an object's keys in the order of OpenCode's schema (the order
// OpenCode writes them in).
func (r *RecordSchema) FillValue(p ocschema.Problem) (json.RawMessage, bool) {
	v := gjson.GetBytes(r.Body, p.Path)
	if !v.Exists() {
		return nil, false
	}
	ref := ""
	if o := ocschema.LookupObject(p.Object); o != nil {
		if f := o.Field(lastKeyOf(p.Path)); f != nil && f.Type == ocschema.Object {
			ref = f.Ref
		}
	}
	return schemaOrdered(v, ref), true
}

// schemaOrdered renders v compactly, an object's keys in the order of the
// schema object ref (keys it does not list last, as they are).
func schemaOrdered(v gjson.Result, ref string) []byte {
	o := ocschema.LookupObject(ref)
	if o == nil || !v.IsObject() {
		var b bytes.Buffer
		if json.Compact(&b, []byte(v.Raw)) != nil {
			return []byte(v.Raw)
		}
		return b.Bytes()
	}
	out := []byte{'{'}
	add := func(k string, val []byte) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		key, _ := json.Marshal(k)
		out = append(append(append(out, key...), ':'), val...)
	}
	listed := map[string]bool{}
	for _, f := range o.Fields {
		listed[f.Name] = true
		if fv := v.Get(ocschema.EscapeKey(f.Name)); fv.Exists() {
			sub := ""
			if f.Type == ocschema.Object {
				sub = f.Ref
			}
			add(f.Name, schemaOrdered(fv, sub))
		}
	}
	v.ForEach(func(k, fv gjson.Result) bool {
		if !listed[k.Str] {
			add(k.Str, schemaOrdered(fv, ""))
		}
		return true
	})
	return append(out, '}')
}

// SessionInfoOf is what the session record says that defaults derive from:
// its directory, its project's worktree and its model. The worktree is
// what OpenCode wrote as another assistant message's path.root, else "/"
// for the global project, else the project row's; the model is the
// session row's (SQLite: a JSON text column; exports: an object), else the
// last one the messages name (what the row would keep).
func SessionInfoOf(s *store.Session) ocschema.SessionInfo {
	var si ocschema.SessionInfo
	if s.Info != nil {
		si.Directory = s.Info.Get("directory").String()
		si.ProviderID, si.ModelID = sent.SessionModel(s)
	}
	if si.ProviderID == "" || si.ModelID == "" {
		// No session row model (JSON shapes, older rows): the row keeps the
		// last model used, which the messages name.
		si.ProviderID, si.ModelID = sent.CurrentModel(s)
	}
	for _, m := range s.Messages {
		if root := m.Get("path.root"); m.Role == "assistant" && root.Type == gjson.String && root.Str != "" {
			si.Worktree = root.Str
			return si
		}
	}
	project := ""
	if s.Info != nil {
		project = s.Info.Get("project_id").String()
		if project == "" {
			project = s.Info.Get("projectID").String()
		}
	}
	if project == ocenv.GlobalProject {
		si.Worktree = "/"
	}
	for _, p := range s.Projects {
		if p.ID == project && si.Worktree == "" {
			si.Worktree = p.Worktree
		}
	}
	return si
}

// parentPath is a gjson path without its last key.
func parentPath(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' && (i == 0 || path[i-1] != '\\') {
			return path[:i]
		}
	}
	return ""
}

func lastKeyOf(path string) string {
	keys := PathKeys(path)
	return keys[len(keys)-1]
}

// openCodePath writes a gjson path the way OpenCode's decoder reports it:
// ["state"]["time"]["end"], [0] for array items.
func openCodePath(path string) string {
	if path == "" {
		return ""
	}
	var b strings.Builder
	for _, k := range PathKeys(path) {
		if _, err := strconv.Atoi(k); err == nil {
			fmt.Fprintf(&b, "[%s]", k)
		} else {
			fmt.Fprintf(&b, "[%q]", k)
		}
	}
	return b.String()
}

// PathKeys splits a gjson path into its keys, unescaping them.
func PathKeys(path string) []string {
	var keys []string
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && i+1 < len(path):
			i++
			b.WriteByte(path[i])
		case c == '.':
			keys = append(keys, b.String())
			b.Reset()
		default:
			b.WriteByte(c)
		}
	}
	return append(keys, b.String())
}

// openCodeMessage words a problem as OpenCode's decoder does ("Missing
// key", "Expected string, got 5").
func openCodeMessage(p ocschema.Problem) string {
	switch p.Kind {
	case ocschema.Missing:
		return "Missing key"
	case ocschema.NotInteger:
		return "Expected an integer, got " + p.Got
	case ocschema.BelowMinimum:
		return "Expected a value greater than or equal to " + p.Want + ", got " + p.Got
	case ocschema.BadPrefix:
		return "Expected a string starting with " + strconv.Quote(p.Want) + ", got " + p.Got
	case ocschema.UnknownVariant:
		return "Expected " + p.Object + ", got {…}"
	case ocschema.Unencodable:
		if p.Object == "UserMessage" && lastKeyOf(p.Path) == "format" {
			// The class OpenCode's encoder expected, by the format's type.
			class := "OutputFormatText"
			if strings.Contains(p.Got, `"json_schema"`) {
				class = "OutputFormatJsonSchema"
			}
			return "Expected " + class + ", got " + p.Got
		}
		return strings.TrimPrefix(p.Want, "400 ")
	case ocschema.BadValue:
		return "Expected " + strings.ReplaceAll(strings.TrimPrefix(p.Want, "one of "), ", ", " | ") + ", got " + p.Got
	}
	return "Expected " + p.Want + ", got " + p.Got
}
