package show

import (
	"github.com/sessfix/sessfix/pkg/report"
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
		Version: version, SchemaVersion: report.SchemaVersion,
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
			Agent: m.Agent, Created: report.JSONTime(m.Created), Completed: report.JSONTime(m.Completed), Finish: m.Finish, Error: m.Error,
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
			sm := ShowSentMessage{Index: m.Label, Role: m.Role, Sources: append([]string{}, m.Sources...),
				NextPrompt: m.NextPrompt, Blocks: []ShowSentBlock{}, Dropped: []ShowSentBlock{}}
			for _, b := range m.Blocks {
				sm.Blocks = append(sm.Blocks, sentBlockJSON(b.Label, b))
			}
			for _, b := range m.Dropped {
				sm.Dropped = append(sm.Dropped, sentBlockJSON("", b))
			}
			doc.Request.Messages = append(doc.Request.Messages, sm)
		}
	}
	return doc
}

func sentBlockJSON(label string, b surgery.SentBlock) ShowSentBlock {
	return ShowSentBlock{Index: label, Type: b.Type, Size: b.Size, Signed: b.Signed, ToolUseID: b.ToolUseID,
		IsError: b.IsError, MessageID: b.MessageID, PartID: b.PartID}
}
