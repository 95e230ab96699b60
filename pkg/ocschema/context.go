package ocschema

import "github.com/tidwall/gjson"

// Row is one stored record of a session with what a store keeps next to
// it: its id, its creation time (SQLite time_created; for files, the time
// in the id) and its body.
type Row struct {
	ID      string
	Created int64
	Body    []byte
}

// MessageRow is a message with its parts, in OpenCode's order.
type MessageRow struct {
	Row
	Parts []Row
}

// SessionContexts derives the Context of every message and part of a
// session, given in OpenCode's order. The result is indexed like msgs:
// contexts of message i, and of its part j.
func SessionContexts(s SessionInfo, msgs []MessageRow) (messages []Context, parts [][]Context) {
	messages = make([]Context, len(msgs))
	parts = make([][]Context, len(msgs))
	role := func(i int) string { return gjson.GetBytes(msgs[i].Body, "role").Str }
	prevUser := ""
	for i, m := range msgs {
		c := Context{Created: m.Created, Session: s}
		switch role(i) {
		case "user":
			c.Reply = reply(msgs, i)
			prevUser = m.ID
		case "assistant":
			c.PreviousUser = prevUser
			c.Completed = gjson.GetBytes(m.Body, "time.completed").Int()
			c.Parent = parent(msgs, i, prevUser)
		}
		messages[i] = c
		parts[i] = make([]Context, len(m.Parts))
		for j, p := range m.Parts {
			parts[i][j] = Context{Created: p.Created, Completed: c.Completed, Message: m.Body, Session: s}
		}
	}
	return messages, parts
}

// reply is the assistant message that answered user message i: the first
// one before the next user message whose parentID names it, else the first
// one before the next user message.
func reply(msgs []MessageRow, i int) []byte {
	var next []byte
	for k := i + 1; k < len(msgs); k++ {
		switch gjson.GetBytes(msgs[k].Body, "role").Str {
		case "user":
			return next
		case "assistant":
			if gjson.GetBytes(msgs[k].Body, "parentID").Str == msgs[i].ID {
				return msgs[k].Body
			}
			if next == nil {
				next = msgs[k].Body
			}
		}
	}
	return next
}

// parent is the user message assistant i answers: the one its parentID
// names when it exists, else the closest user message before it.
func parent(msgs []MessageRow, i int, prevUser string) []byte {
	want := gjson.GetBytes(msgs[i].Body, "parentID").Str
	var fallback []byte
	for k := i - 1; k >= 0; k-- {
		if msgs[k].ID == want && want != "" {
			return msgs[k].Body
		}
		if msgs[k].ID == prevUser && fallback == nil {
			fallback = msgs[k].Body
		}
	}
	return fallback
}
