package sessions

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/surgery"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

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

// TestSessionsNameTheirStoreWhenThereAreSeveral: sessions from several
// stores (copies of one, say) carry their store: a STORE column on a
// terminal, only then; piped, every line has the store before the title.
func TestSessionsNameTheirStoreWhenThereAreSeveral(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	s := surgery.Summary{ID: "ses_33c1f6ffffffO8I11AapoBFcd9", Title: "a\ttab", Directory: "/w", Messages: 4, LastActivity: now}
	a, b := s, s
	a.Store.Path, b.Store.Path = "copies/a.json", "copies/b.json"
	var buf bytes.Buffer
	if err := WriteSessions(&buf, []surgery.Summary{a, b}, true, false, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if !strings.Contains(lines[0], "  STORE  ") || !strings.Contains(lines[1], "  copies/a.json  ") || !strings.Contains(lines[2], "  copies/b.json  ") {
		t.Errorf("no STORE column naming each session's store:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSessions(&buf, []surgery.Summary{a}, true, false, now); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "STORE") {
		t.Errorf("a STORE column for one store:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSessions(&buf, []surgery.Summary{a, b}, false, false, now); err != nil {
		t.Fatal(err)
	}
	want := "ses_33c1f6ffffffO8I11AapoBFcd9\t2026-11-25T12:00:00.000Z\t4\tclean\t-\t/w\tcopies/a.json\ta\\ttab\n"
	if got := strings.SplitAfter(buf.String(), "\n")[0]; got != want {
		t.Errorf("piped line %q, want %q", got, want)
	}
}
