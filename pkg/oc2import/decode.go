package oc2import

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/ocschema"
)

// The reasons the importer logs with "Skipped V1 migration row".
const (
	InvalidMessage = "invalid-message"
	InvalidPart    = "invalid-part"
	OrphanPart     = "orphan-part"
)

// Row is one 1.x message or part row, as the importer selects it.
type Row struct {
	ID string
	// MessageID is a part's message_id column; "" for a message.
	MessageID string
	// SessionID is the row's session_id column.
	SessionID        string
	Created, Updated int64
	Data             []byte
}

// Session is what the importer's patch reads from the 1.x session row.
type Session struct {
	ID string
	// Agent is the agent column, Model the model column (a JSON object
	// {"id","providerID",...}); "" when NULL.
	Agent, Model string
}

// Skip is one row the importer drops.
type Skip struct {
	Reason string
	// MessageID and PartID name the row (a part's MessageID is its
	// message_id column).
	MessageID, PartID string
	// Missing are the keys the importer's own patch could not supply, for
	// an invalid-message (the importer logs them).
	Missing []string
	// NotObject is set when the data is not a JSON object; Problems are
	// otherwise what the 1.x decode rejects after the patch (none for an
	// orphan-part).
	NotObject bool
	Problems  []ocschema.Problem
}

// Message is a message the import keeps.
type Message struct {
	Row Row
	// Body is the row's data after the importer's patch: what it decodes.
	Body []byte
}

// Result is what the import does with one session's rows.
type Result struct {
	// Messages are the messages it keeps, in its order.
	Messages []Message
	// Parts are the parts that decode, in id order; those of a skipped
	// message are dropped with it.
	Parts []Row
	// Skipped are the rows it drops with a warning: messages in its order,
	// then parts in id order (the importer logs parts in the order SQLite
	// returns them).
	Skipped []Skip
}

// Decode runs the import's decisions over one session's message and part
// rows (the parts the importer selects: those whose session_id is the
// session's).
func Decode(s Session, messages, parts []Row) Result {
	msgs := append([]Row(nil), messages...)
	sort.SliceStable(msgs, func(i, j int) bool {
		if msgs[i].Created != msgs[j].Created {
			return msgs[i].Created < msgs[j].Created
		}
		return msgs[i].ID < msgs[j].ID
	})
	values := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		values[i] = object(m.Data)
	}
	var res Result
	for i, m := range msgs {
		if values[i] == nil {
			res.Skipped = append(res.Skipped, Skip{Reason: InvalidMessage, MessageID: m.ID, NotObject: true})
			continue
		}
		body, missing := patch(values, i, msgs, s)
		if probs := problems(ocschema.MessageRecord, body, ocschema.IDs{ID: m.ID, SessionID: m.SessionID}); len(probs) > 0 {
			res.Skipped = append(res.Skipped, Skip{Reason: InvalidMessage, MessageID: m.ID, Missing: missing, Problems: probs})
			continue
		}
		res.Messages = append(res.Messages, Message{Row: m, Body: body})
	}
	all := map[string]bool{}
	for _, m := range msgs {
		all[m.ID] = true
	}
	ps := append([]Row(nil), parts...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
	for _, p := range ps {
		if !all[p.MessageID] {
			res.Skipped = append(res.Skipped, Skip{Reason: OrphanPart, MessageID: p.MessageID, PartID: p.ID})
			continue
		}
		if object(p.Data) == nil {
			res.Skipped = append(res.Skipped, Skip{Reason: InvalidPart, MessageID: p.MessageID, PartID: p.ID, NotObject: true})
			continue
		}
		if probs := problems(ocschema.PartRecord, p.Data, ocschema.IDs{ID: p.ID, SessionID: p.SessionID, MessageID: p.MessageID}); len(probs) > 0 {
			res.Skipped = append(res.Skipped, Skip{Reason: InvalidPart, MessageID: p.MessageID, PartID: p.ID, Problems: probs})
			continue
		}
		res.Parts = append(res.Parts, p)
	}
	return res
}

// problems is what the 1.x schema the importer decodes with rejects:
// 1.18.33's, except a stored format decodes (only 1.18's server cannot
// encode it).
func problems(r ocschema.Record, body []byte, ids ocschema.IDs) []ocschema.Problem {
	var out []ocschema.Problem
	for _, p := range ocschema.Check(r, body, ids) {
		if p.Kind != ocschema.Unencodable {
			out = append(out, p)
		}
	}
	return out
}

// object parses data as the importer does (a JSON value that is an
// object), keeping numbers as written; nil when it is not one.
func object(data []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil || dec.More() {
		return nil
	}
	return v
}

// patch is legacyMetadata for message i: the body the importer decodes,
// and the keys no source could supply.
func patch(values []map[string]any, i int, msgs []Row, s Session) ([]byte, []string) {
	v := make(map[string]any, len(values[i])+2)
	for k, x := range values[i] {
		v[k] = x
	}
	var missing []string
	switch v["role"] {
	case "user":
		handled := nextReply(values, i)
		if handled == nil {
			handled = previousReply(values, i)
		}
		v["agent"] = agent(values[i], handled, s)
		if v["model"] == nil { // absent or null: JavaScript's ??
			if m := replyModel(handled); m != nil {
				v["model"] = m
			} else if m := sessionModel(s); m != nil {
				v["model"] = m
			} else {
				missing = append(missing, "model")
			}
		}
	case "assistant":
		v["agent"] = agent(values[i], nil, s)
		if v["parentID"] == nil {
			if u := previousUser(values, msgs, i); u != "" {
				v["parentID"] = u
			} else {
				missing = append(missing, "parentID")
			}
		}
	default:
		out, _ := json.Marshal(values[i])
		return out, nil
	}
	out, _ := json.Marshal(v)
	return out, missing
}

// agent is legacyAgent: the first string among the row's agent and mode,
// its reply's, and the session row's agent, else "build".
func agent(value, handled map[string]any, s Session) any {
	for _, m := range []map[string]any{value, handled} {
		for _, k := range []string{"agent", "mode"} {
			if str, ok := m[k].(string); ok {
				return str
			}
		}
	}
	if s.Agent != "" {
		return s.Agent
	}
	return "build"
}

func nextReply(values []map[string]any, i int) map[string]any {
	for k := i + 1; k < len(values); k++ {
		if values[k]["role"] == "assistant" {
			return values[k]
		}
	}
	return nil
}

func previousReply(values []map[string]any, i int) map[string]any {
	for k := i - 1; k >= 0; k-- {
		if values[k]["role"] == "assistant" {
			return values[k]
		}
	}
	return nil
}

func previousUser(values []map[string]any, msgs []Row, i int) string {
	for k := i - 1; k >= 0; k-- {
		if values[k]["role"] == "user" {
			return msgs[k].ID
		}
	}
	return ""
}

// replyModel is the reply's providerID and modelID, when both are strings.
func replyModel(reply map[string]any) map[string]any {
	p, ok1 := reply["providerID"].(string)
	m, ok2 := reply["modelID"].(string)
	if !ok1 || !ok2 {
		return nil
	}
	return map[string]any{"providerID": p, "modelID": m}
}

// sessionModel is the session row's model as a user message's model:
// {providerID, modelID: id}, keys the row lacks left out.
func sessionModel(s Session) map[string]any {
	if s.Model == "" || !gjson.Valid(s.Model) {
		return nil
	}
	m := gjson.Parse(s.Model)
	if !m.IsObject() {
		return nil
	}
	out := map[string]any{}
	if p := m.Get("providerID"); p.Exists() {
		out["providerID"] = p.Value()
	}
	if id := m.Get("id"); id.Exists() {
		out["modelID"] = id.Value()
	}
	return out
}
