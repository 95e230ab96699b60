package oc2fixture

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/ocschema"
)

// This file follows OpenCode 2's one-shot import of 1.x sessions,
// transformSession and run in packages/core/src/database/v1-migration.bun.ts
// of anomalyco/opencode (commit 0871f3f705c4), for the shapes the fixtures
// hold: it decodes each 1.x message and part with the 1.x schema (which is
// 1.18.33's: ocschema), after the importer's own patch of legacy rows, and
// drops what does not decode, with a Warning; projects a user message's
// text and an assistant message's text, reasoning and tools into one
// session_message row each; appends a system notice when the visible
// history called tools 2.x renamed. Compaction pairing, subtask turns and
// file attachments are not ported (no fixture has them).

// source is one 1.x message or part row.
type source struct {
	id, messageID, sessionID string
	created, updated         int64
	data                     string
}

// v2Message is one session_message row.
type v2Message struct {
	id      string
	typ     string
	seq     int
	created int64
	updated int64
	data    map[string]any
}

// Warning is what the importer logs ("Skipped V1 migration row") for a
// row it drops.
type Warning struct {
	Reason    string   `json:"reason"`
	SessionID string   `json:"sessionID"`
	MessageID string   `json:"messageID,omitempty"`
	PartID    string   `json:"partID,omitempty"`
	Missing   []string `json:"missing,omitempty"`
}

type decoded struct {
	row  source
	body gjson.Result
}

// transform projects one 1.x session. sessionAgent and sessionModel are
// the 1.x session row's agent and model columns ("" when NULL).
func transform(sessionID, sessionAgent, sessionModel string, msgs, parts []source) ([]v2Message, map[string]any, []Warning) {
	sort.SliceStable(msgs, func(i, j int) bool {
		if msgs[i].created != msgs[j].created {
			return msgs[i].created < msgs[j].created
		}
		return msgs[i].id < msgs[j].id
	})
	var warnings []Warning
	var ok []decoded
	prevUser := ""
	for i, m := range msgs {
		body := []byte(m.data)
		if !gjson.Valid(m.data) || !gjson.Parse(m.data).IsObject() {
			warnings = append(warnings, Warning{Reason: "invalid-message", SessionID: sessionID, MessageID: m.id})
			continue
		}
		patched, missing := legacyPatch(body, msgs, i, prevUser, sessionAgent, sessionModel)
		if gjson.GetBytes(body, "role").Str == "user" {
			prevUser = m.id
		}
		if len(importProblems(ocschema.MessageRecord, patched, ocschema.IDs{ID: m.id, SessionID: m.sessionID})) > 0 {
			warnings = append(warnings, Warning{Reason: "invalid-message", SessionID: sessionID, MessageID: m.id, Missing: missing})
			continue
		}
		ok = append(ok, decoded{m, gjson.ParseBytes(patched)})
	}
	all := map[string]bool{}
	for _, m := range msgs {
		all[m.id] = true
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].id < parts[j].id })
	byMessage := map[string][]gjson.Result{}
	for _, p := range parts {
		if !all[p.messageID] {
			warnings = append(warnings, Warning{Reason: "orphan-part", SessionID: sessionID, MessageID: p.messageID, PartID: p.id})
			continue
		}
		if len(importProblems(ocschema.PartRecord, []byte(p.data), ocschema.IDs{ID: p.id, SessionID: p.sessionID, MessageID: p.messageID})) > 0 {
			warnings = append(warnings, Warning{Reason: "invalid-part", SessionID: sessionID, MessageID: p.messageID, PartID: p.id})
			continue
		}
		byMessage[p.messageID] = append(byMessage[p.messageID], gjson.Parse(p.data))
	}
	var out []v2Message
	var called []string
	for _, m := range ok {
		owned := byMessage[m.row.id]
		switch m.body.Get("role").Str {
		case "user":
			var text []string
			for _, p := range owned {
				if p.Get("type").Str == "text" && !p.Get("ignored").Bool() && !p.Get("synthetic").Bool() {
					text = append(text, p.Get("text").Str)
				}
			}
			out = append(out, v2Message{id: m.row.id, typ: "user", created: m.row.created, updated: m.row.updated,
				data: map[string]any{"text": strings.Join(text, "\n\n"), "time": map[string]any{"created": m.row.created}}})
		case "assistant":
			var content []any
			for _, p := range owned {
				switch p.Get("type").Str {
				case "text":
					content = append(content, withState(map[string]any{"type": "text", "text": p.Get("text").Str}, p))
				case "reasoning":
					t := map[string]any{"created": p.Get("time.start").Int()}
					if e := p.Get("time.end"); e.Exists() {
						t["completed"] = e.Int()
					}
					content = append(content, withState(map[string]any{"type": "reasoning", "text": p.Get("text").Str, "time": t}, p))
				case "tool":
					called = append(called, p.Get("tool").Str)
					content = append(content, migrateTool(p, m.row.created))
				}
			}
			if content == nil {
				content = []any{}
			}
			msg := map[string]any{
				"agent": m.body.Get("agent").Str,
				"model": map[string]any{"providerID": m.body.Get("providerID").Str, "id": m.body.Get("modelID").Str,
					"variant": orDefault(m.body.Get("variant").Str, "default")},
				"content": content,
				"cost":    m.body.Get("cost").Value(),
				"tokens": map[string]any{"input": m.body.Get("tokens.input").Value(), "output": m.body.Get("tokens.output").Value(),
					"reasoning": m.body.Get("tokens.reasoning").Value(), "cache": m.body.Get("tokens.cache").Value()},
				"time": map[string]any{"created": m.row.created},
			}
			if f := normalizeFinish(m.body.Get("finish").Str); f != "" {
				msg["finish"] = f
			}
			if m.body.Get("time.completed").Exists() {
				msg["time"].(map[string]any)["completed"] = m.row.updated
			}
			if e := m.body.Get("error"); e.Exists() {
				msg["error"] = map[string]any{"type": "provider.error", "message": e.Get("data.message").Str}
			}
			out = append(out, v2Message{id: m.row.id, typ: "assistant", created: m.row.created, updated: m.row.updated, data: msg})
		}
	}
	for i := range out {
		out[i].seq = i
	}
	if notice := toolNotice(called); notice != "" && len(out) > 0 {
		last := out[len(out)-1]
		out = append(out, v2Message{id: syntheticID(last.id), typ: "system", seq: len(out), created: last.created, updated: last.updated,
			data: map[string]any{"text": notice, "time": map[string]any{"created": last.created}}})
	}
	session := map[string]any{"watermark": len(out) - 1}
	return out, session, warnings
}

// importProblems is what the 1.x schema the importer decodes with rejects:
// 1.18.33's, but a stored format decodes (only 1.18's server cannot encode
// it).
func importProblems(r ocschema.Record, body []byte, ids ocschema.IDs) []ocschema.Problem {
	var out []ocschema.Problem
	for _, p := range ocschema.Check(r, body, ids) {
		if p.Kind != ocschema.Unencodable {
			out = append(out, p)
		}
	}
	return out
}

// legacyPatch fills what the importer recovers for rows older than the
// required agent, user model and assistant parentID (legacyMetadata):
// agent from the row's agent or mode, the reply's, the session's, else
// "build"; a user message's model from the reply, else the session; an
// assistant message's parentID from the previous user message.
func legacyPatch(body []byte, msgs []source, i int, prevUser, sessionAgent, sessionModel string) ([]byte, []string) {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		return body, nil
	}
	var reply gjson.Result
	for k := i + 1; k < len(msgs); k++ {
		if gjson.Get(msgs[k].data, "role").Str == "assistant" {
			reply = gjson.Parse(msgs[k].data)
			break
		}
	}
	if !reply.Exists() {
		for k := i - 1; k >= 0; k-- {
			if gjson.Get(msgs[k].data, "role").Str == "assistant" {
				reply = gjson.Parse(msgs[k].data)
				break
			}
		}
	}
	var missing []string
	self := gjson.ParseBytes(body)
	agent := firstString(self.Get("agent"), self.Get("mode"))
	switch v["role"] {
	case "user":
		if agent == "" {
			agent = firstString(reply.Get("agent"), reply.Get("mode"))
		}
		if _, ok := v["model"]; !ok {
			switch {
			case reply.Get("providerID").Str != "" && reply.Get("modelID").Str != "":
				v["model"] = map[string]any{"providerID": reply.Get("providerID").Str, "modelID": reply.Get("modelID").Str}
			case sessionModel != "":
				v["model"] = map[string]any{"providerID": gjson.Get(sessionModel, "providerID").Str, "modelID": gjson.Get(sessionModel, "id").Str}
			default:
				missing = append(missing, "model")
			}
		}
	case "assistant":
		if _, ok := v["parentID"]; !ok {
			if prevUser != "" {
				v["parentID"] = prevUser
			} else {
				missing = append(missing, "parentID")
			}
		}
	default:
		return body, nil
	}
	v["agent"] = orDefault(orDefault(agent, sessionAgent), "build")
	out, _ := json.Marshal(v)
	return out, missing
}

func firstString(vals ...gjson.Result) string {
	for _, v := range vals {
		if v.Type == gjson.String {
			return v.Str
		}
	}
	return ""
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func withState(m map[string]any, p gjson.Result) map[string]any {
	if md := p.Get("metadata"); md.Exists() {
		m["state"] = md.Value()
	}
	return m
}

func migrateTool(p gjson.Result, fallback int64) map[string]any {
	base := map[string]any{"type": "tool", "id": p.Get("callID").Str, "name": p.Get("tool").Str}
	if md := p.Get("metadata"); md.Exists() {
		base["providerState"] = md.Value()
	}
	st := p.Get("state")
	switch st.Get("status").Str {
	case "completed":
		content := []any{map[string]any{"type": "text", "text": st.Get("output").Str}}
		if st.Get("time.compacted").Exists() {
			content = []any{map[string]any{"type": "text", "text": "[Old tool result content cleared]"}}
		}
		base["state"] = map[string]any{"status": "completed", "input": st.Get("input").Value(), "content": content, "metadata": st.Get("metadata").Value()}
		base["time"] = map[string]any{"created": st.Get("time.start").Int(), "completed": st.Get("time.end").Int()}
	case "error":
		s := map[string]any{"status": "error", "input": st.Get("input").Value(),
			"error": map[string]any{"type": "tool.execution", "message": st.Get("error").Str}}
		if md := st.Get("metadata"); md.Exists() {
			s["metadata"] = md.Value()
		}
		base["state"] = s
		base["time"] = map[string]any{"created": st.Get("time.start").Int(), "completed": st.Get("time.end").Int()}
	default:
		base["state"] = map[string]any{"status": "error", "input": st.Get("input").Value(),
			"error": map[string]any{"type": "tool.interrupted", "message": "Tool execution was interrupted before V2 migration"}}
		created := fallback
		if st.Get("status").Str == "running" {
			created = st.Get("time.start").Int()
		}
		base["time"] = map[string]any{"created": created}
	}
	return base
}

func normalizeFinish(f string) string {
	switch f {
	case "":
		return ""
	case "stop", "length", "tool-calls", "content-filter", "error", "unknown":
		return f
	}
	return "unknown"
}

// toolNotice is the system message the importer appends when the history
// called tools that 2.x renamed or removed (legacyToolNotice), for the
// tools the fixtures call.
func toolNotice(called []string) string {
	has := map[string]bool{}
	for _, c := range called {
		has[c] = true
	}
	renamed := map[string]string{"bash": "shell", "task": "subagent", "apply_patch": "patch"}
	var parts []string
	for _, name := range []string{"bash", "task", "apply_patch"} {
		if has[name] {
			parts = append(parts, "The `"+name+"` tool is now `"+renamed[name]+"` and must be called by that name.")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(append([]string{"The available tools have changed."}, parts...), "\n\n")
}

// syntheticID mints the id of a row the importer adds after source: the
// source's prefix and time digits, a fixed tail (OpenCode hashes the
// source id for it).
func syntheticID(source string) string { return source[:16] + "V1Notice000000" }
