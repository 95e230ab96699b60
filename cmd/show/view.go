package show

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// WriteSession writes a session's stored history, message by message: its
// position, role, id, model, time, how it ended, and its parts with type,
// state and size. Messages the pending revert deletes and messages OpenCode
// never sends are marked.
func WriteSession(w io.Writer, v *surgery.View, color bool) error {
	st := report.NewStyles(color)
	bw := bufio.NewWriter(w)
	writeSessionHeader(bw, st, v)
	for _, m := range v.Messages {
		line := fmt.Sprintf("#%d %s %s", m.Index, st.Title.Render(m.Role), m.ID)
		if mdl := report.ModelName(m.ProviderID, m.ModelID); mdl != "-" {
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
			fmt.Fprintf(bw, "    %s %s\n", st.Error.Render("error"), report.Clean(m.Error))
		}
		if m.Text != "" {
			fmt.Fprintf(bw, "    %s %s %q\n", st.Dim.Render("text"), size(m.TextSize), report.Clean(m.Text))
		}
		for _, p := range m.Parts {
			fmt.Fprintf(bw, "    %s %s\n", st.Dim.Render(p.ID), partLine(st, p))
		}
	}
	for _, b := range v.Broken {
		fmt.Fprintf(bw, "%s %s %s at %s: %s\n", st.Error.Render("unreadable"), b.Kind, b.ID, report.Clean(b.Where), report.Clean(b.Reason))
	}
	return bw.Flush()
}

func writeSessionHeader(bw *bufio.Writer, st *report.Styles, v *surgery.View) {
	title := ""
	if v.Title != "" {
		title = fmt.Sprintf(" %q", v.Title)
	}
	fmt.Fprintf(bw, "%s %s%s\n", st.Header.Render("session"), st.Title.Render(v.ID), report.Clean(title))
	fmt.Fprintf(bw, "  %s store %s\n", v.Store.Shape, report.Clean(v.Store.Path))
	var facts []string
	if v.Directory != "" {
		facts = append(facts, "directory "+report.Clean(v.Directory))
	}
	if v.Project != "" {
		facts = append(facts, "project "+report.Clean(v.Project))
	}
	if v.Version != "" {
		facts = append(facts, "OpenCode "+report.Clean(v.Version))
	}
	if v.ParentID != "" {
		facts = append(facts, "child of "+report.Clean(v.ParentID))
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
			st.Warning.Render("revert"), report.Clean(at))
	}
}

func partLine(st *report.Styles, p surgery.PartView) string {
	f := []string{p.Type}
	if p.Tool != "" {
		f = append(f, report.Clean(p.Tool))
	}
	if p.State != "" {
		s := report.Clean(p.State)
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
	st := report.NewStyles(color)
	bw := bufio.NewWriter(w)
	writeSessionHeader(bw, st, v)
	r := v.Sent
	thinking := "thinking off"
	if r.Thinking {
		thinking = "thinking on"
	}
	fmt.Fprintf(bw, "  request to %s: %s API, %s, OpenCode %s conversion, %s, ending with your next prompt\n",
		report.ModelName(r.ProviderID, r.ModelID), r.Kind, thinking, r.Conversion, entries(r))
	if r.RevertApplied {
		fmt.Fprintf(bw, "  %s the reverted messages are left out: OpenCode deletes them before it sends\n", st.Hint.Render("note:"))
	}
	for _, m := range r.Messages {
		idx := m.Label
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
			fmt.Fprintf(bw, "  %s %s\n", st.Code.Render(b.Label), blockLine(st, b))
		}
		for _, b := range m.Dropped {
			fmt.Fprintf(bw, "  %s %s\n", st.Dim.Render("left out by the SDK:"), blockLine(st, b))
		}
	}
	return bw.Flush()
}

// entries counts the request's entries in its family's words: a Responses
// request's input items, a Gemini request's contents, messages otherwise.
func entries(r *surgery.Sent) string {
	switch r.Kind {
	case sent.Responses:
		return plural.Count(len(r.Messages), "input item", "input items")
	case sent.Google:
		return plural.Count(len(r.Messages), "content", "contents")
	}
	return plural.Count(len(r.Messages), "message", "messages")
}

func blockLine(st *report.Styles, b surgery.SentBlock) string {
	f := []string{b.Type}
	switch {
	case b.Type == "thinking" && b.Signed:
		f = append(f, "signed")
	case b.Type == "thinking":
		f = append(f, st.Warning.Render("unsigned"))
	}
	if b.ToolUseID != "" {
		f = append(f, report.Clean(b.ToolUseID))
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
