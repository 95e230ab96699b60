package sessions

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/surgery"
)

// This file renders `sessfix sessions`: a table (a terminal) or
// tab-separated lines (a pipe) of sessions, and its JSON document
// (docs/json-output.md).

// SessionsDocument is `sessfix sessions --format json`.
type SessionsDocument struct {
	Version       string             `json:"version"`
	SchemaVersion int                `json:"schema_version"`
	Stores        []SessionsStore    `json:"stores"`
	Sessions      []SessionListEntry `json:"sessions"`
}

// SessionsStore is one store that was listed, or could not be.
type SessionsStore struct {
	Shape string `json:"shape"`
	Path  string `json:"path"`
	Error string `json:"error"`
}

// SessionListEntry is one session of the list.
type SessionListEntry struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	Store        string        `json:"store"`
	Shape        string        `json:"shape"`
	Directory    string        `json:"directory"`
	Project      string        `json:"project"`
	ParentID     string        `json:"parent_id"`
	Provider     string        `json:"provider"`
	Model        string        `json:"model"`
	Messages     int           `json:"messages"`
	Parts        int           `json:"parts"`
	LastActivity string        `json:"last_activity"`
	Health       SessionHealth `json:"health"`
}

// SessionHealth is a session's health.
type SessionHealth struct {
	State    string `json:"state"`
	Busy     bool   `json:"busy"`
	Errors   int    `json:"errors"`
	Warnings int    `json:"warnings"`
	Info     int    `json:"info"`
	Error    string `json:"error"`
}

// NewSessionsDocument builds the JSON document of a session list.
func NewSessionsDocument(version string, l *surgery.Listing) *SessionsDocument {
	doc := &SessionsDocument{Version: version, SchemaVersion: report.SchemaVersion, Stores: []SessionsStore{}, Sessions: []SessionListEntry{}}
	for _, st := range l.Stores {
		e := SessionsStore{Shape: string(st.Info.Shape), Path: st.Info.Path}
		if st.Err != nil {
			e.Error = st.Err.Error()
		}
		doc.Stores = append(doc.Stores, e)
	}
	for _, s := range l.Sessions {
		h := SessionHealth{State: s.Health.State(), Busy: s.Health.Busy, Errors: s.Health.Errors, Warnings: s.Health.Warnings, Info: s.Health.Infos}
		if s.Health.Err != nil {
			h.Error = s.Health.Err.Error()
		}
		doc.Sessions = append(doc.Sessions, SessionListEntry{
			ID: s.ID, Title: s.Title, Store: s.Store.Path, Shape: string(s.Store.Shape),
			Directory: s.Directory, Project: s.Project, ParentID: s.ParentID,
			Provider: s.ProviderID, Model: s.ModelID, Messages: s.Messages, Parts: s.Parts,
			LastActivity: report.JSONTime(s.LastActivity), Health: h,
		})
	}
	return doc
}

// WriteSessions writes the session list: on a terminal an aligned table
// (titles, directories and stores shortened, times relative to now, and a
// STORE column when the sessions come from more than one store), otherwise one
// tab-separated line per session with every value whole (id, last
// activity in RFC 3339, messages, health, provider/model, directory,
// store, title) for scripts; a tab inside a value is written as \t.
func WriteSessions(w io.Writer, list []surgery.Summary, tty, color bool, now time.Time) error {
	st := report.NewStyles(color)
	bw := bufio.NewWriter(w)
	if !tty {
		for _, s := range list {
			fmt.Fprintf(bw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.ID, report.JSONTime(s.LastActivity), s.Messages, healthStyle(st, s.Health).Render(s.Health.State()),
				report.ModelName(s.ProviderID, s.ModelID), field(s.Directory), field(s.Store.Path), field(s.Title))
		}
		return bw.Flush()
	}
	stores := map[string]bool{}
	for _, s := range list {
		stores[s.Store.Path] = true
	}
	several := len(stores) > 1
	head := []string{"ID", "ACTIVE", "MSGS", "HEALTH", "MODEL", "DIRECTORY", "STORE", "TITLE"}
	if !several {
		head = slices.Delete(head, 6, 7)
	}
	rows := [][]string{{}}
	for _, h := range head {
		rows[0] = append(rows[0], st.Header.Render(h))
	}
	for _, s := range list {
		row := []string{s.ID, ago(s.LastActivity, now), strconv.Itoa(s.Messages), healthCell(st, s.Health),
			report.ModelName(s.ProviderID, s.ModelID), report.Clean(shorten(s.Directory, 32, true))}
		if several {
			row = append(row, report.Clean(shorten(s.Store.Path, 32, true)))
		}
		rows = append(rows, append(row, report.Clean(shorten(s.Title, 40, false))))
	}
	writeColumns(bw, rows)
	return bw.Flush()
}

// field is a value of a tab-separated line: Clean, with a tab as \t.
func field(s string) string { return strings.ReplaceAll(report.Clean(s), "\t", `\t`) }

// writeColumns writes rows as columns two spaces apart, each as wide as its
// widest cell on screen: colour codes take no room (text/tabwriter counts
// their bytes and misaligns a coloured table).
func writeColumns(w io.Writer, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
}

// healthCell is the health column: the state, with the finding counts.
func healthCell(st *report.Styles, h surgery.Health) string {
	state := h.State()
	var parts []string
	if h.Errors > 0 {
		parts = append(parts, strconv.Itoa(h.Errors)+"E")
	}
	if h.Warnings > 0 {
		parts = append(parts, strconv.Itoa(h.Warnings)+"W")
	}
	if h.Infos > 0 {
		parts = append(parts, strconv.Itoa(h.Infos)+"I")
	}
	text := state
	if len(parts) > 0 && state != "unreadable" {
		text = state + " " + strings.Join(parts, " ")
	}
	return healthStyle(st, h).Render(text)
}

// healthStyle is the colour of a session's health.
func healthStyle(st *report.Styles, h surgery.Health) lipgloss.Style {
	switch {
	case h.Err != nil || h.Errors > 0:
		return st.Error
	case h.Busy || h.Warnings > 0:
		return st.Warning
	case h.Infos > 0:
		return st.Info
	}
	return st.OK
}

// ago says how long before now t was, coarsely ("3m ago", "2h ago"), or
// the date for anything older than a week.
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Local().Format("2006-01-02 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	case d < 7*24*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
	return t.Local().Format("2006-01-02")
}

// shorten cuts s to n characters with an ellipsis, keeping the end (a
// path) or the start.
func shorten(s string, n int, keepEnd bool) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if keepEnd {
		return "…" + string(r[len(r)-n+1:])
	}
	return string(r[:n-1]) + "…"
}
