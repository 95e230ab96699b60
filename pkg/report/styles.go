package report

import (
	"io"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/sessfix/sessfix/pkg/scan"
)

// Styles are every style sessfix's terminal output uses. They render plain
// text when colour is off.
type Styles struct {
	Error   lipgloss.Style
	Warning lipgloss.Style
	Info    lipgloss.Style
	Code    lipgloss.Style
	Header  lipgloss.Style
	Title   lipgloss.Style
	Dim     lipgloss.Style
	Hint    lipgloss.Style
	OK      lipgloss.Style
}

// NewStyles builds the styles. The renderer's colour profile comes from the
// caller's decision (16 ANSI colours or none), never from lipgloss probing
// the terminal, so output is the same wherever the decision is the same.
func NewStyles(color bool) *Styles {
	r := lipgloss.NewRenderer(io.Discard)
	if color {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	r.SetHasDarkBackground(true)
	return &Styles{
		Error:   r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Warning: r.NewStyle().Foreground(lipgloss.Color("3")),
		Info:    r.NewStyle().Foreground(lipgloss.Color("6")),
		Code:    r.NewStyle().Bold(true),
		Header:  r.NewStyle().Bold(true),
		Title:   r.NewStyle().Bold(true),
		Dim:     r.NewStyle().Faint(true),
		Hint:    r.NewStyle().Foreground(lipgloss.Color("4")),
		OK:      r.NewStyle().Foreground(lipgloss.Color("2")),
	}
}

// Severity returns the style of a severity name.
func (s *Styles) Severity(sev scan.Severity) lipgloss.Style {
	switch sev {
	case scan.Error:
		return s.Error
	case scan.Warning:
		return s.Warning
	}
	return s.Info
}
