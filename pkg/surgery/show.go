package surgery

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// View is one session as `sessfix show` prints it: the stored history,
// message by message, and optionally the request OpenCode would send.
type View struct {
	Store store.Info
	ID    string
	Title string
	// Directory, Project, ParentID and Version are the session record's.
	Directory, Project, ParentID, Version string
	// Revert is the pending revert, or nil.
	Revert   *Revert
	Messages []MessageView
	// Broken lists the records that could not be read.
	Broken []BrokenView
	// Sent is the request OpenCode would send next (ShowOptions.Sent).
	Sent *Sent
}

// MessageView is one stored message.
type MessageView struct {
	// Index is the message's position in OpenCode's order, from 0.
	Index    int
	ID, Role string
	// ParentID is an assistant message's user message.
	ParentID string
	// ProviderID and ModelID are the model a user message asked for or an
	// assistant message answered with; Agent the agent (mode).
	ProviderID, ModelID, Agent string
	Created, Completed         time.Time
	// Finish is why an assistant message ended ("stop", "tool-calls").
	Finish string
	// Error is "name: message" of an assistant message's error.
	Error string
	// Summary marks a compaction's summary; Compaction a user message
	// holding a compaction request.
	Summary, Compaction bool
	// Reverted marks a message the pending revert deletes on the next
	// prompt (wholly, or from Revert.PartID on).
	Reverted bool
	// Skipped marks a message OpenCode leaves out of every request (an
	// error other than an abort, no parts). Never set in an OpenCode 2
	// session: what OpenCode 2 sends is not modelled.
	Skipped bool
	// Text is the start of the text an OpenCode 2 message keeps in its own
	// record rather than in parts, on one line (a user, system or synthetic
	// message's text, a shell command, a compaction's summary); TextSize
	// its bytes.
	Text     string
	TextSize int
	Parts    []PartView
}

// PartView is one stored part.
type PartView struct {
	ID, Type string
	// State is a tool's status, a reasoning part's "signed", "redacted" or
	// "unsigned", a text part's "empty", "synthetic" or "ignored".
	State string
	// Tool is a tool part's tool name.
	Tool string
	// Size is the bytes of what the part carries: text, reasoning, a tool's
	// input and output or error.
	Size int
	// Excerpt is the start of a text part's text, on one line.
	Excerpt  string
	Reverted bool
}

// BrokenView is a record that could not be read.
type BrokenView struct {
	Kind   store.Kind
	ID     string
	Where  string
	Reason string
}

// Sent is the request OpenCode would send for the session's next prompt,
// as the preflight builds it (sent.Build with the next prompt).
type Sent struct {
	ProviderID, ModelID string
	Kind                sent.Family
	// Conversion is the OpenCode conversion modelled ("1.18", "1.1").
	Conversion sent.Version
	Thinking   bool
	Messages   []SentMessage
	// RevertApplied is set when the pending revert's messages were left
	// out, as OpenCode deletes them before it sends.
	RevertApplied bool
}

// SentMessage is one entry of the request (its messages, input or contents
// array), at Index.
type SentMessage struct {
	Index int
	// Label is the entry's index the way its provider prints it in errors
	// (messages.3, input[3], contents[3]).
	Label string
	Role  string
	// Sources are the stored messages it was built from; NextPrompt marks
	// the user's next prompt in it.
	Sources    []string
	NextPrompt bool
	Blocks     []SentBlock
	// Dropped are blocks OpenCode converted and the provider SDK then left
	// out (reasoning without a signature).
	Dropped []SentBlock
}

// SentBlock is one content block of an entry, at Index among its blocks.
type SentBlock struct {
	Index int
	// Label is where the block is sent, the way its provider prints it
	// (messages.3.content.0, input[3].content[0], contents[3].parts[0],
	// messages[3].tool_calls[0]); empty for a block left out.
	Label string
	// Type is the provider's block type (text, thinking, tool_use, ...).
	Type string
	// Size is the bytes of a text or thinking block's text.
	Size int
	// Signed marks a thinking block sent with its signature.
	Signed bool
	// ToolUseID is a tool_use's id, or the id a tool_result answers.
	ToolUseID string
	IsError   bool
	// MessageID and PartID are the stored records the block came from;
	// both empty for the next prompt.
	MessageID, PartID string
}

// ShowOptions configure Show.
type ShowOptions struct {
	// Sent also builds the request OpenCode would send.
	Sent bool
}

// excerptLen is how many characters of a text part Show keeps.
const excerptLen = 60

// Show describes a loaded session.
func Show(s *store.Session, opts ShowOptions) *View {
	v := &View{
		Store: s.Store, ID: s.ID, Title: s.Title,
		Directory: get(s, fDirectory).String(), Project: get(s, fProject).String(),
		ParentID: get(s, fParent).String(), Version: get(s, fVersion).String(),
		Revert: revertOf(s),
	}
	reverted := revertedSet(s, v.Revert)
	v2 := s.OpenCode2 != nil && s.OpenCode2.V2
	for i, m := range s.Messages {
		mv := MessageView{
			Index: i, ID: m.ID, Role: m.Role, ParentID: m.Get("parentID").String(),
			Agent: m.Get("agent").String(), Finish: m.Get("finish").String(),
			Summary: m.Role == "assistant" && m.Get("summary").Bool(), Reverted: reverted.messages[m.ID],
			Skipped: !v2 && opencode.SkippedByOpenCode(m),
		}
		if mv.Agent == "" {
			mv.Agent = m.Get("mode").String()
		}
		if m.Role == "user" {
			mv.ProviderID, mv.ModelID = m.Get("model.providerID").String(), m.Get("model.modelID").String()
		} else {
			mv.ProviderID, mv.ModelID = m.Get("providerID").String(), m.Get("modelID").String()
		}
		if c := m.Get("time.created").Int(); c > 0 {
			mv.Created = time.UnixMilli(c)
		}
		if c := m.Get("time.completed").Int(); c > 0 {
			mv.Completed = time.UnixMilli(c)
		}
		if name := opencode.ErrorName(m); name != "" {
			mv.Error = name
			if msg := m.Get("error.data.message").String(); msg != "" {
				mv.Error += ": " + oneLine(msg, 200)
			}
		}
		if v2 {
			describeV2(&mv, m)
		}
		for _, p := range m.Parts {
			if p.Type == "compaction" {
				mv.Compaction = true
			}
			pv := describePart(p)
			pv.Reverted = mv.Reverted || reverted.parts[p.ID]
			mv.Parts = append(mv.Parts, pv)
		}
		v.Messages = append(v.Messages, mv)
	}
	for _, b := range s.Broken {
		reason := ""
		if b.Err != nil {
			reason = b.Err.Error()
		}
		v.Broken = append(v.Broken, BrokenView{Kind: b.Kind, ID: b.ID, Where: b.Loc.String(), Reason: reason})
	}
	for _, o := range s.Orphans {
		v.Broken = append(v.Broken, BrokenView{Kind: store.KindPart, ID: o.ID, Where: o.Loc.String(),
			Reason: "orphan: its message " + o.MessageID + " does not exist"})
	}
	if opts.Sent {
		v.Sent = nextRequest(s, v.Revert)
	}
	return v
}

// describeV2 reads what an OpenCode 2 message row keeps in its data
// (packages/core/src/session/message.ts), where a 1.x message has other
// keys or parts: the model an assistant message answered with, its error
// ({type, message}), and the text of the other messages. The 1.x rule
// that a message without parts is never sent does not hold there.
func describeV2(mv *MessageView, m *store.Message) {
	mv.ProviderID, mv.ModelID = m.Get("model.providerID").String(), m.Get("model.id").String()
	if e := m.Get("error"); e.Exists() {
		mv.Error = e.Get("type").String()
		if msg := e.Get("message").String(); msg != "" {
			mv.Error = strings.TrimPrefix(mv.Error+": "+oneLine(msg, 200), ": ")
		}
	}
	for _, key := range []string{"text", "command", "summary"} {
		if t := m.Get(key); t.Type == gjson.String {
			mv.Text, mv.TextSize = oneLine(t.Str, excerptLen), len(t.Str)
			return
		}
	}
}

func describePart(p *store.Part) PartView {
	pv := PartView{ID: p.ID, Type: p.Type}
	switch p.Type {
	case "text":
		t := opencode.PartText(p)
		pv.Size = len(t)
		switch {
		case p.Get("ignored").Bool():
			pv.State = "ignored"
		case strings.TrimSpace(t) == "":
			pv.State = "empty"
		case opencode.IsSynthetic(p):
			pv.State = "synthetic"
		}
		pv.Excerpt = oneLine(t, excerptLen)
	case "reasoning", "thinking", "redacted_thinking":
		pv.Size = len(opencode.PartText(p))
		switch {
		case p.Get("metadata.anthropic.redactedData").String() != "" || p.Get("metadata.bedrock.redactedData").String() != "" || p.Type == "redacted_thinking":
			pv.State = "redacted"
		case opencode.IsSigned(p):
			pv.State = "signed"
		default:
			pv.State = "unsigned"
		}
	case "tool":
		pv.Tool = p.Get("tool").String()
		pv.State = p.Get("state.status").String()
		pv.Size = len(p.Get("state.input").Raw) + len(p.Get("state.output").String()) + len(p.Get("state.error").String())
	case "file":
		pv.State = p.Get("mime").String()
		pv.Excerpt = oneLine(p.Get("filename").String(), excerptLen)
	case "step-finish":
		pv.State = p.Get("reason").String()
	case "subtask", "agent":
		pv.Excerpt = oneLine(p.Get("description").String()+p.Get("name").String(), excerptLen)
	}
	return pv
}

// oneLine shortens s to n characters on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// reverted is what a pending revert deletes.
type reverted struct {
	messages map[string]bool
	parts    map[string]bool
}

// revertedSet lists what OpenCode's revert cleanup (1.18) deletes on the
// next prompt: the messages from the revert's message on, or, when it
// names a part, that message's parts from the part on and every later
// message. A revert naming a message that no longer exists deletes nothing.
func revertedSet(s *store.Session, rv *Revert) reverted {
	out := reverted{messages: map[string]bool{}, parts: map[string]bool{}}
	if rv == nil {
		return out
	}
	at := -1
	for i, m := range s.Messages {
		if m.ID == rv.MessageID {
			at = i
			break
		}
	}
	if at < 0 {
		return out
	}
	from := at
	if rv.PartID != "" {
		from = at + 1
		cut := false
		for _, p := range s.Messages[at].Parts {
			cut = cut || p.ID == rv.PartID
			if cut {
				out.parts[p.ID] = true
			}
		}
	}
	for _, m := range s.Messages[from:] {
		out.messages[m.ID] = true
	}
	return out
}

// Describe is a message in a few words for a list of choices: its
// position, role and the start of its first text ("#3 user Run this one
// too").
func Describe(i int, m *store.Message) string {
	d := "#" + strconv.Itoa(i) + " " + m.Role
	for _, p := range m.Parts {
		if p.Type == "text" && strings.TrimSpace(opencode.PartText(p)) != "" {
			return d + " " + oneLine(opencode.PartText(p), 40)
		}
	}
	for _, p := range m.Parts {
		if p.Type == "tool" {
			return d + " tool " + p.Get("tool").String()
		}
	}
	return d
}
