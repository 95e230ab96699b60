package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// ShowDocument is `sessfix show --format json`: the stored history and the
// request OpenCode would send, always both.
type ShowDocument struct {
	Version       string        `json:"version"`
	SchemaVersion int           `json:"schema_version"`
	Store         ShowStore     `json:"store"`
	Session       ShowSession   `json:"session"`
	Messages      []ShowMessage `json:"messages"`
	Broken        []ShowBroken  `json:"broken"`
	Request       ShowRequest   `json:"request"`
}

// ShowStore is the store holding the session.
type ShowStore struct {
	Shape string `json:"shape"`
	Path  string `json:"path"`
}

// ShowSession is the session record.
type ShowSession struct {
	ID        string     `json:"id"`
	Title     string     `json:"title"`
	Directory string     `json:"directory"`
	Project   string     `json:"project"`
	ParentID  string     `json:"parent_id"`
	Version   string     `json:"version"`
	Revert    ShowRevert `json:"revert"`
}

// ShowRevert is the pending revert; both ids are "" when there is none.
type ShowRevert struct {
	MessageID string `json:"message_id"`
	PartID    string `json:"part_id"`
}

// ShowMessage is one stored message.
type ShowMessage struct {
	Index      int        `json:"index"`
	ID         string     `json:"id"`
	Role       string     `json:"role"`
	ParentID   string     `json:"parent_id"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	Agent      string     `json:"agent"`
	Created    string     `json:"created"`
	Completed  string     `json:"completed"`
	Finish     string     `json:"finish"`
	Error      string     `json:"error"`
	Summary    bool       `json:"summary"`
	Compaction bool       `json:"compaction"`
	Reverted   bool       `json:"reverted"`
	Skipped    bool       `json:"skipped"`
	Text       string     `json:"text"`
	TextSize   int        `json:"text_size"`
	Parts      []ShowPart `json:"parts"`
}

// ShowPart is one stored part.
type ShowPart struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	State    string `json:"state"`
	Tool     string `json:"tool"`
	Size     int    `json:"size"`
	Excerpt  string `json:"excerpt"`
	Reverted bool   `json:"reverted"`
}

// ShowBroken is a record that could not be read.
type ShowBroken struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	Where  string `json:"where"`
	Reason string `json:"reason"`
}

// ShowRequest is the request OpenCode would send for the next prompt.
type ShowRequest struct {
	Provider      string            `json:"provider"`
	Model         string            `json:"model"`
	Kind          string            `json:"kind"`
	Conversion    string            `json:"conversion"`
	Thinking      bool              `json:"thinking"`
	RevertApplied bool              `json:"revert_applied"`
	Messages      []ShowSentMessage `json:"messages"`
}

// ShowSentMessage is one entry of the request's messages array.
type ShowSentMessage struct {
	Index      string          `json:"index"`
	Role       string          `json:"role"`
	Sources    []string        `json:"sources"`
	NextPrompt bool            `json:"next_prompt"`
	Blocks     []ShowSentBlock `json:"blocks"`
	Dropped    []ShowSentBlock `json:"dropped"`
}

// ShowSentBlock is one content block; Index is "" for a dropped block.
type ShowSentBlock struct {
	Index     string `json:"index"`
	Type      string `json:"type"`
	Size      int    `json:"size"`
	Signed    bool   `json:"signed"`
	ToolUseID string `json:"tool_use_id"`
	IsError   bool   `json:"is_error"`
	MessageID string `json:"message_id"`
	PartID    string `json:"part_id"`
}

// NewShowDocument builds the JSON document of a session view; v.Sent must
// be set.
func NewShowDocument(version string, v *surgery.View) *ShowDocument {
	doc := &ShowDocument{
		Version: version, SchemaVersion: SchemaVersion,
		Store: ShowStore{Shape: string(v.Store.Shape), Path: v.Store.Path},
		Session: ShowSession{ID: v.ID, Title: v.Title, Directory: v.Directory, Project: v.Project,
			ParentID: v.ParentID, Version: v.Version},
		Messages: []ShowMessage{}, Broken: []ShowBroken{},
	}
	if v.Revert != nil {
		doc.Session.Revert = ShowRevert{MessageID: v.Revert.MessageID, PartID: v.Revert.PartID}
	}
	for _, m := range v.Messages {
		sm := ShowMessage{Index: m.Index, ID: m.ID, Role: m.Role, ParentID: m.ParentID, Provider: m.ProviderID, Model: m.ModelID,
			Agent: m.Agent, Created: jsonTime(m.Created), Completed: jsonTime(m.Completed), Finish: m.Finish, Error: m.Error,
			Summary: m.Summary, Compaction: m.Compaction, Reverted: m.Reverted, Skipped: m.Skipped,
			Text: m.Text, TextSize: m.TextSize, Parts: []ShowPart{}}
		for _, p := range m.Parts {
			sm.Parts = append(sm.Parts, ShowPart{ID: p.ID, Type: p.Type, State: p.State, Tool: p.Tool, Size: p.Size,
				Excerpt: p.Excerpt, Reverted: p.Reverted})
		}
		doc.Messages = append(doc.Messages, sm)
	}
	for _, b := range v.Broken {
		doc.Broken = append(doc.Broken, ShowBroken{Kind: string(b.Kind), ID: b.ID, Where: b.Where, Reason: b.Reason})
	}
	doc.Request = ShowRequest{Messages: []ShowSentMessage{}}
	if r := v.Sent; r != nil {
		doc.Request = ShowRequest{Provider: r.ProviderID, Model: r.ModelID, Kind: string(r.Kind), Conversion: string(r.Conversion),
			Thinking: r.Thinking, RevertApplied: r.RevertApplied, Messages: []ShowSentMessage{}}
		for _, m := range r.Messages {
			sm := ShowSentMessage{Index: fmt.Sprintf("messages.%d", m.Index), Role: m.Role, Sources: append([]string{}, m.Sources...),
				NextPrompt: m.NextPrompt, Blocks: []ShowSentBlock{}, Dropped: []ShowSentBlock{}}
			for _, b := range m.Blocks {
				sm.Blocks = append(sm.Blocks, sentBlockJSON(sm.Index, b))
			}
			for _, b := range m.Dropped {
				sm.Dropped = append(sm.Dropped, sentBlockJSON("", b))
			}
			doc.Request.Messages = append(doc.Request.Messages, sm)
		}
	}
	return doc
}

func sentBlockJSON(msgIndex string, b surgery.SentBlock) ShowSentBlock {
	idx := ""
	if msgIndex != "" && b.Index >= 0 {
		idx = fmt.Sprintf("%s.content.%d", msgIndex, b.Index)
	}
	return ShowSentBlock{Index: idx, Type: b.Type, Size: b.Size, Signed: b.Signed, ToolUseID: b.ToolUseID,
		IsError: b.IsError, MessageID: b.MessageID, PartID: b.PartID}
}

// WriteSession writes a session's stored history, message by message: its
// position, role, id, model, time, how it ended, and its parts with type,
// state and size. Messages the pending revert deletes and messages OpenCode
// never sends are marked.
func WriteSession(w io.Writer, v *surgery.View, color bool) error {
	st := NewStyles(color)
	bw := bufio.NewWriter(w)
	writeSessionHeader(bw, st, v)
	for _, m := range v.Messages {
		line := fmt.Sprintf("#%d %s %s", m.Index, st.Title.Render(m.Role), m.ID)
		if mdl := model(m.ProviderID, m.ModelID); mdl != "-" {
			line += " " + mdl
		}
		if !m.Created.IsZero() {
			line += " " + st.Dim.Render(m.Created.Local().Format(time.DateTime))
		}
		var tags []string
		if m.Finish != "" {
			tags = append(tags, "finish "+m.Finish)
		}
		if m.Role == "assistant" && m.Completed.IsZero() && m.Error == "" {
			tags = append(tags, "unfinished")
		}
		if m.Summary {
			tags = append(tags, "compaction summary")
		}
		if m.Compaction {
			tags = append(tags, "compaction")
		}
		if m.Skipped {
			tags = append(tags, "not sent")
		}
		if len(tags) > 0 {
			line += " " + st.Dim.Render("("+strings.Join(tags, ", ")+")")
		}
		if m.Reverted {
			line += " " + st.Warning.Render("reverted")
		}
		fmt.Fprintln(bw, line)
		if m.Error != "" {
			fmt.Fprintf(bw, "    %s %s\n", st.Error.Render("error"), Clean(m.Error))
		}
		if m.Text != "" {
			fmt.Fprintf(bw, "    %s %s %q\n", st.Dim.Render("text"), size(m.TextSize), Clean(m.Text))
		}
		for _, p := range m.Parts {
			fmt.Fprintf(bw, "    %s %s\n", st.Dim.Render(p.ID), partLine(st, p))
		}
	}
	for _, b := range v.Broken {
		fmt.Fprintf(bw, "%s %s %s at %s: %s\n", st.Error.Render("unreadable"), b.Kind, b.ID, Clean(b.Where), Clean(b.Reason))
	}
	return bw.Flush()
}

func writeSessionHeader(bw *bufio.Writer, st *Styles, v *surgery.View) {
	title := ""
	if v.Title != "" {
		title = fmt.Sprintf(" %q", v.Title)
	}
	fmt.Fprintf(bw, "%s %s%s\n", st.Header.Render("session"), st.Title.Render(v.ID), Clean(title))
	fmt.Fprintf(bw, "  %s store %s\n", v.Store.Shape, Clean(v.Store.Path))
	var facts []string
	if v.Directory != "" {
		facts = append(facts, "directory "+Clean(v.Directory))
	}
	if v.Project != "" {
		facts = append(facts, "project "+Clean(v.Project))
	}
	if v.Version != "" {
		facts = append(facts, "OpenCode "+Clean(v.Version))
	}
	if v.ParentID != "" {
		facts = append(facts, "child of "+Clean(v.ParentID))
	}
	if len(facts) > 0 {
		fmt.Fprintf(bw, "  %s\n", strings.Join(facts, ", "))
	}
	if v.Revert != nil {
		at := v.Revert.MessageID
		if v.Revert.PartID != "" {
			at += " part " + v.Revert.PartID
		}
		fmt.Fprintf(bw, "  %s pending from %s: OpenCode deletes what is marked reverted on the next prompt (/redo brings it back)\n",
			st.Warning.Render("revert"), Clean(at))
	}
}

func partLine(st *Styles, p surgery.PartView) string {
	f := []string{p.Type}
	if p.Tool != "" {
		f = append(f, Clean(p.Tool))
	}
	if p.State != "" {
		s := Clean(p.State)
		switch p.State {
		case "unsigned", "empty", "error", "pending", "running":
			s = st.Warning.Render(s)
		}
		f = append(f, s)
	}
	if p.Size > 0 || p.Type == "text" || p.Type == "reasoning" {
		f = append(f, size(p.Size))
	}
	if p.Excerpt != "" {
		f = append(f, fmt.Sprintf("%q", p.Excerpt))
	}
	line := strings.Join(f, " ")
	if p.Reverted {
		line += " " + st.Warning.Render("reverted")
	}
	return line
}

// size is a byte count for people.
func size(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

// WriteSent writes the request OpenCode would send for the session's next
// prompt: each provider message with its messages.N index, the stored
// messages it comes from, and each content block with its content.M index
// and the stored message and part it maps to, so a provider's error index
// can be read off directly.
func WriteSent(w io.Writer, v *surgery.View, color bool) error {
	st := NewStyles(color)
	bw := bufio.NewWriter(w)
	writeSessionHeader(bw, st, v)
	r := v.Sent
	thinking := "thinking off"
	if r.Thinking {
		thinking = "thinking on"
	}
	fmt.Fprintf(bw, "  request to %s: %s API, %s, OpenCode %s conversion, %s, ending with your next prompt\n",
		model(r.ProviderID, r.ModelID), r.Kind, thinking, r.Conversion, plural.Count(len(r.Messages), "message", "messages"))
	if r.RevertApplied {
		fmt.Fprintf(bw, "  %s the reverted messages are left out: OpenCode deletes them before it sends\n", st.Hint.Render("note:"))
	}
	for _, m := range r.Messages {
		idx := fmt.Sprintf("messages.%d", m.Index)
		from := strings.Join(m.Sources, ", ")
		if m.NextPrompt {
			if from != "" {
				from += " + "
			}
			from += "your next prompt"
		}
		if from == "" {
			// The system prompt (Chat Completions' messages.0) is added
			// by OpenCode to every request; nothing stored maps to it.
			from = "nothing stored"
			if m.Role == "system" || m.Role == "developer" {
				from = "the " + m.Role + " prompt OpenCode adds (not stored)"
			}
		}
		fmt.Fprintf(bw, "%s %s %s %s\n", st.Code.Render(idx), st.Title.Render(m.Role), st.Dim.Render("from"), from)
		for _, b := range m.Blocks {
			fmt.Fprintf(bw, "  %s %s\n", st.Code.Render(fmt.Sprintf("%s.content.%d", idx, b.Index)), blockLine(st, b))
		}
		for _, b := range m.Dropped {
			fmt.Fprintf(bw, "  %s %s\n", st.Dim.Render("left out by the SDK:"), blockLine(st, b))
		}
	}
	return bw.Flush()
}

func blockLine(st *Styles, b surgery.SentBlock) string {
	f := []string{b.Type}
	switch {
	case b.Type == "thinking" && b.Signed:
		f = append(f, "signed")
	case b.Type == "thinking":
		f = append(f, st.Warning.Render("unsigned"))
	}
	if b.ToolUseID != "" {
		f = append(f, Clean(b.ToolUseID))
	}
	if b.IsError {
		f = append(f, "error")
	}
	if (b.Type == "text" || b.Type == "thinking") && b.MessageID != "" {
		f = append(f, size(b.Size))
	}
	if b.MessageID == "" {
		f = append(f, st.Dim.Render("(your next prompt)"))
	} else {
		f = append(f, st.Dim.Render("← "+b.MessageID+" "+b.PartID))
	}
	return strings.Join(f, " ")
}
