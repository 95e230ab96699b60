package oc2fixture

import (
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/oc2import"
)

// This file follows OpenCode 2's one-shot import of 1.x sessions,
// transformSession and run in packages/core/src/database/v1-migration.bun.ts
// of anomalyco/opencode (commit 0871f3f705c4), for the shapes the fixtures
// hold: which rows it keeps and drops (with a Warning) is pkg/oc2import's,
// the decision sessfix's rules report; this file projects a user message's
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
	rows := func(src []source) []oc2import.Row {
		var out []oc2import.Row
		for _, r := range src {
			out = append(out, oc2import.Row{ID: r.id, MessageID: r.messageID, SessionID: r.sessionID, Created: r.created, Updated: r.updated, Data: []byte(r.data)})
		}
		return out
	}
	res := oc2import.Decode(oc2import.Session{ID: sessionID, Agent: sessionAgent, Model: sessionModel}, rows(msgs), rows(parts))
	var warnings []Warning
	for _, sk := range res.Skipped {
		warnings = append(warnings, Warning{Reason: sk.Reason, SessionID: sessionID, MessageID: sk.MessageID, PartID: sk.PartID, Missing: sk.Missing})
	}
	var ok []decoded
	for _, m := range res.Messages {
		ok = append(ok, decoded{source{id: m.Row.ID, sessionID: m.Row.SessionID, created: m.Row.Created, updated: m.Row.Updated, data: string(m.Row.Data)}, gjson.ParseBytes(m.Body)})
	}
	byMessage := map[string][]gjson.Result{}
	for _, p := range res.Parts {
		byMessage[p.MessageID] = append(byMessage[p.MessageID], gjson.ParseBytes(p.Data))
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
