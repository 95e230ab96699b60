package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/surgery"
)

// TestSessionsTableIsAlignedInColour: on a terminal every column of the
// session list starts at the same place on every line, with colour or
// without; colour codes take no room on screen.
func TestSessionsTableIsAlignedInColour(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	list := []surgery.Summary{
		{ID: "ses_33c1f6ffffffO8I11AapoBFcd9", Title: "interrupted", Directory: "/home/dev/webapp", ProviderID: "anthropic",
			ModelID: "claude-sonnet-4-5", Messages: 4, LastActivity: now.Add(-time.Hour), Health: surgery.Health{Errors: 2, Warnings: 1}},
		{ID: "ses_2b28944fffff85dc4PToKKeEYM", Title: "healthy", Directory: "/srv/api", ProviderID: "openai",
			ModelID: "gpt-5.2", Messages: 12, LastActivity: now.Add(-48 * time.Hour)},
	}
	for _, color := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteSessions(&buf, list, true, color, now); err != nil {
			t.Fatal(err)
		}
		if color && !ansi.MatchString(buf.String()) {
			t.Fatalf("color: no colour codes in\n%q", buf.String())
		}
		lines := strings.Split(strings.TrimSuffix(ansi.ReplaceAllString(buf.String(), ""), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("color=%v: %d lines, want a header and 2 rows:\n%s", color, len(lines), buf.String())
		}
		for _, col := range []string{"ACTIVE", "MSGS", "HEALTH", "MODEL", "DIRECTORY", "TITLE"} {
			at := strings.Index(lines[0], col)
			for _, l := range lines[1:] {
				if at < 1 || at > len(l) || l[at-1] != ' ' || l[at] == ' ' {
					t.Errorf("color=%v: column %s starts at %d in the header but not in\n%s\n%s", color, col, at, lines[0], l)
				}
			}
		}
	}
}
