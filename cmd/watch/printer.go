package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/report"
	"github.com/sessfix/sessfix/pkg/watch"
)

// printer writes the watcher's events as text lines or JSON Lines.
type printer struct {
	w       io.Writer
	json    bool
	styles  *report.Styles
	verbose bool
	quiet   bool
	err     error
}

func (p *printer) shows(k watch.Kind) bool {
	switch {
	case p.verbose:
		return true
	case p.quiet:
		return k == watch.Repaired || k == watch.WouldRepair || k == watch.Failed
	}
	return k.Matters()
}

func (p *printer) print(e watch.Event) {
	if !p.shows(e.Kind) || p.err != nil {
		return
	}
	var line string
	if p.json {
		b, err := json.Marshal(e)
		if err != nil {
			p.err = err
			return
		}
		line = string(b)
	} else {
		line = p.text(e)
	}
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.err = err
	}
}

// text renders one event: time, what happened, the session, the rules,
// then details.
func (p *printer) text(e watch.Event) string {
	st := p.styles
	kind := string(e.Kind)
	switch e.Kind {
	case watch.Repaired, watch.WouldRepair, watch.StoreFound:
		kind = st.OK.Render(kind)
	case watch.Failed:
		kind = st.Error.Render(kind)
	case watch.SkippedBusy, watch.Unfixed, watch.Warning, watch.Waiting:
		kind = st.Warning.Render(kind)
	default:
		kind = st.Dim.Render(kind)
	}
	parts := []string{st.Dim.Render(e.Time.Local().Format("15:04:05")), kind}
	if e.Session != "" {
		s := st.Title.Render(report.Clean(e.Session))
		if e.Title != "" {
			s += " " + fmt.Sprintf("%q", e.Title)
		}
		parts = append(parts, s)
	}
	if len(e.Rules) > 0 {
		codes := make([]string, len(e.Rules))
		for i, c := range e.Rules {
			codes[i] = st.Code.Render(c)
		}
		parts = append(parts, strings.Join(codes, ","))
	}
	if e.Edits > 0 {
		parts = append(parts, "("+plural.Count(e.Edits, "edit", "edits")+")")
	}
	if e.Backup != "" {
		parts = append(parts, "backup "+e.Backup)
	}
	line := strings.Join(parts, " ")
	if e.Message != "" {
		line += ": " + report.Clean(e.Message)
	}
	if e.Error != "" {
		line += ": " + report.Clean(e.Error)
	}
	if e.Session == "" && e.Store != nil {
		line += " (" + string(e.Store.Shape) + " store " + report.Clean(e.Store.Path) + ")"
	}
	return line
}
