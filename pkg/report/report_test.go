package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	goldenfile "github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// sampleReport is a scan of three stores: a database with one clean and two
// damaged sessions, a sessions/ tree with a note, and an export file.
func sampleReport() *Report {
	db := store.Info{Shape: store.ShapeSQLite, Path: "/data/opencode/opencode.db", Notes: []string{}}
	tree := store.Info{Shape: store.ShapeSessions, Path: "/home/u/.opencode/sessions", Notes: []string{"pre-migration copy"}}
	exp := store.Info{Shape: store.ShapeExport, Path: "/tmp/ses.json"}
	f := func(in store.Info, code, rule string, sev scan.Severity, msg, ses, m, p string, loc store.Location, fix string) scan.Finding {
		return scan.Finding{Code: code, Rule: rule, Severity: sev, Message: msg, Store: in, StorePath: in.Path, Shape: in.Shape,
			SessionID: ses, MessageID: m, PartID: p, Location: loc, Fix: fix}
	}
	return &Report{
		Version:    "1.2.3",
		FailPolicy: atOrAbove(scan.Warning),
		Result: &scan.Result{
			Stores: []scan.StoreResult{
				{Info: db, Sessions: []scan.SessionSummary{
					{ID: "ses_a", Title: "fix the build", Messages: 14, Parts: 40, Findings: 3},
					{ID: "ses_b", Title: "", Messages: 3, Parts: 9, Findings: 1},
					{ID: "ses_c", Title: "clean one", Messages: 2, Parts: 4},
				}},
				{Info: tree, Sessions: []scan.SessionSummary{{ID: "ses_d", Title: "tree", Messages: 1, Parts: 1, Findings: 1}}},
				{Info: exp, Sessions: []scan.SessionSummary{{ID: "ses_e", Title: "exported", Messages: 5, Parts: 6, Findings: 1}}},
			},
			Findings: []scan.Finding{
				// A finding about the database itself (a store-health
				// rule): no session.
				f(db, "SF504", "free-space", scan.Info, "6000 of the database's 8000 pages (23.4 MiB) are free", "", "", "",
					store.Location{Path: db.Path}, ""),
				f(db, "SF103", "thinking-not-first", scan.Error, "reasoning part comes after a text part", "ses_a", "msg_1", "prt_2",
					store.Location{Path: db.Path, Table: "part", RowID: 42}, "moveThinkingFirst"),
				withProviderError(f(db, "SF302", "failed-attempt", scan.Error, "the last attempt failed with apierror", "ses_a", "msg_8", "",
					store.Location{Path: db.Path, Table: "message", RowID: 8}, "moveThinkingFirst"),
					"messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block",
					"messages.3.content.0", "thinking_block_order"),
				f(db, "SF104", "empty-text-part", scan.Warning, "text part is whitespace-only", "ses_a", "msg_1", "prt_3",
					store.Location{Path: db.Path, Table: "part", RowID: 43}, "replaceEmptyTextParts"),
				f(db, "SF103", "thinking-not-first", scan.Error, "reasoning part comes after a tool part", "ses_b", "msg_9", "",
					store.Location{Path: db.Path, Table: "message", RowID: 7}, "stripThinkingParts"),
				f(tree, "SF204", "message-order", scan.Info, "assistant message sorts before its parent", "ses_d", "msg_4", "",
					store.Location{Path: tree.Path + "/ses_d/messages/msg_4.json", Line: 1}, ""),
				f(exp, "SF101", "empty-message", scan.Warning, "assistant message has no content part", "ses_e", "msg_5", "",
					store.Location{Path: exp.Path, Line: 88}, "injectTextPart"),
			},
		},
	}
}

// atOrAbove is the policy of `--fail-on SEVERITY` (cli.FailPolicy, which
// sessfix's commands use; the default is warning): suppressed findings never
// fail, others do at or above the severity.
type atOrAbove scan.Severity

func (s atOrAbove) Fails(f scan.Finding) bool {
	return !f.Suppressed() && f.Severity >= scan.Severity(s)
}

func (s atOrAbove) FailOnString() string { return scan.Severity(s).String() }

func withProviderError(f scan.Finding, text, index, typ string) scan.Finding {
	f.ProviderError, f.Index, f.ErrorType = text, index, typ
	return f
}

func render(t *testing.T, format string, opts Options, r *Report) string {
	t.Helper()
	p, err := New(format, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Print(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestGoldenOutputs(t *testing.T) {
	for _, tt := range []struct {
		file, format string
		opts         Options
	}{
		{"piped.golden", "text", Options{}},
		{"piped-color.golden", "text", Options{Color: true}},
		{"tty.golden", "text", Options{TTY: true}},
		{"tty-color.golden", "text", Options{TTY: true, Color: true}},
		{"scan.json.golden", "json", Options{}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			golden(t, tt.file, render(t, tt.format, tt.opts, sampleReport()))
		})
	}
}

// TestPipedTextIsOneLinePerFinding: piped, one line per finding; colour,
// when forced (--color always), changes nothing but the escape codes
// around the severity.
func TestPipedTextIsOneLinePerFinding(t *testing.T) {
	r := sampleReport()
	out := render(t, "text", Options{}, r)
	if colored := render(t, "text", Options{Color: true}, r); !ansi.MatchString(colored) || ansi.ReplaceAllString(colored, "") != out {
		t.Errorf("forced colour is not the piped lines with escape codes:\n%s", colored)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(r.Result.Findings) {
		t.Fatalf("got %d lines for %d findings:\n%s", len(lines), len(r.Result.Findings), out)
	}
	for i, f := range r.Result.Findings {
		want := Where(f) + ": " + f.Severity.String() + " " + f.Code + " " + f.Message
		if lines[i] != want {
			t.Errorf("line %d = %q, want %q", i, lines[i], want)
		}
	}
	if ansi.MatchString(out) {
		t.Error("piped output contains escape sequences")
	}
}

func TestTTYColour(t *testing.T) {
	plain := render(t, "text", Options{TTY: true}, sampleReport())
	if ansi.MatchString(plain) {
		t.Error("colour off but output has escape sequences")
	}
	coloured := render(t, "text", Options{TTY: true, Color: true}, sampleReport())
	if !strings.Contains(coloured, "\x1b[1;31merror") && !strings.Contains(coloured, "\x1b[31;1merror") {
		t.Errorf("errors are not bold red:\n%q", coloured)
	}
	if got := ansi.ReplaceAllString(coloured, ""); got != plain {
		t.Errorf("coloured output without colour differs from plain output:\n%s\nvs\n%s", got, plain)
	}
}

func TestWhere(t *testing.T) {
	tests := []struct {
		name string
		f    scan.Finding
		want string
	}{
		{"sqlite part", scan.Finding{Shape: store.ShapeSQLite, SessionID: "ses_1", MessageID: "msg_2", PartID: "prt_3",
			Location: store.Location{Path: "/x/opencode.db", Table: "part", RowID: 42}}, "/x/opencode.db:part/42 (ses_1/msg_2/prt_3)"},
		{"sqlite session", scan.Finding{Shape: store.ShapeSQLite, SessionID: "ses_1",
			Location: store.Location{Path: "/x/opencode.db", Table: "session", RowID: 1}}, "/x/opencode.db:session/1 (ses_1)"},
		{"json file", scan.Finding{Shape: store.ShapeStorage, SessionID: "ses_1", MessageID: "msg_2", PartID: "prt_3",
			Location: store.Location{Path: "/s/part/msg_2/prt_3.json", Line: 1}}, "/s/part/msg_2/prt_3.json:1"},
		{"export", scan.Finding{Shape: store.ShapeExport, SessionID: "ses_1", MessageID: "msg_2",
			Location: store.Location{Path: "/e.json", Line: 7}}, "/e.json:7 (ses_1/msg_2)"},
		{"no location", scan.Finding{Shape: store.ShapeSessions, StorePath: "/root/sessions", SessionID: "ses_1"}, "/root/sessions"},
	}
	for _, tt := range tests {
		if got := Where(tt.f); got != tt.want {
			t.Errorf("%s: Where = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSummaryAndHints(t *testing.T) {
	r := sampleReport()
	s := r.Summarize()
	// The finding about the database itself is a finding, but no session:
	// 5 sessions, 4 of them affected.
	if s.Total != 7 || s.Store != 1 || s.Error != 3 || s.Warning != 2 || s.Info != 2 || s.Fixable != 5 || s.Sessions != 5 || s.Stores != 3 || s.Affected != 4 {
		t.Errorf("summary = %+v", s)
	}
	if s.Failing != 5 || r.Failing() != 5 {
		t.Errorf("failing at warning = %d/%d, want 5", s.Failing, r.Failing())
	}
	r.FailPolicy = atOrAbove(scan.Error)
	if r.Failing() != 3 {
		t.Errorf("failing at error = %d, want 3", r.Failing())
	}
	r.FailPolicy = atOrAbove(scan.Info)
	if r.Failing() != 7 {
		t.Errorf("failing at info = %d, want 7", r.Failing())
	}
	hints := Hints(r)
	if len(hints) != 2 || !strings.Contains(hints[0], "repair 5 of them") || !strings.Contains(hints[1], "sessfix explain SF103") {
		t.Errorf("hints = %q", hints)
	}
	if h := Hints(&Report{Result: &scan.Result{}}); h != nil {
		t.Errorf("hints for a clean scan = %q, want none", h)
	}
}

func TestExplainHintTieTakesLowestCode(t *testing.T) {
	var fs []scan.Finding
	for _, code := range []string{"SF104", "SF105", "SF101", "SF104", "SF101"} {
		fs = append(fs, scan.Finding{Code: code, Severity: scan.Error, SessionID: "ses_1"})
	}
	hints := Hints(&Report{Result: &scan.Result{Findings: fs}, FailPolicy: atOrAbove(scan.Warning)})
	if len(hints) == 0 || !strings.Contains(hints[len(hints)-1], "sessfix explain SF101") {
		t.Errorf("hints = %q, want the tie between SF101 and SF104 to name SF101", hints)
	}
}

func TestCleanTTY(t *testing.T) {
	r := &Report{Result: &scan.Result{Stores: []scan.StoreResult{{
		Info:     store.Info{Shape: store.ShapeSQLite, Path: "/x/opencode.db"},
		Sessions: []scan.SessionSummary{{ID: "ses_1"}, {ID: "ses_2"}},
	}}}}
	out := render(t, "text", Options{TTY: true}, r)
	for _, want := range []string{"sqlite store /x/opencode.db", "2 sessions, all clean", "no findings in 2 sessions"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hint:") || strings.Contains(out, "ses_1") {
		t.Errorf("clean output lists sessions or hints:\n%s", out)
	}
	if got := render(t, "text", Options{}, r); got != "" {
		t.Errorf("piped clean output = %q, want nothing", got)
	}
}

func TestStoreErrorShown(t *testing.T) {
	r := &Report{Result: &scan.Result{Stores: []scan.StoreResult{{
		Info: store.Info{Shape: store.ShapeStorage, Path: "/s"},
		Err:  errors.New("cannot read /s/session: permission denied"),
	}}}}
	out := render(t, "text", Options{TTY: true}, r)
	if !strings.Contains(out, "error: cannot read /s/session: permission denied") {
		t.Errorf("store error missing:\n%s", out)
	}
	if strings.Contains(out, "0 sessions, all clean") {
		t.Errorf("a store that could not be listed claims 0 clean sessions:\n%s", out)
	}
}

// A database SQL cannot open lists no session: its summary line says so
// rather than "0 sessions, all clean"; a store that is empty says "no
// sessions".
func TestUnlistableDatabaseIsNotClean(t *testing.T) {
	info := store.Info{Shape: store.ShapeSQLite, Path: "/x/opencode.db"}
	r := &Report{Result: &scan.Result{
		Stores:   []scan.StoreResult{{Info: info, Sessions: []scan.SessionSummary{}}},
		Findings: []scan.Finding{{Code: "SF501", Rule: "damaged-database", Severity: scan.Error, Message: "its header is gone", Store: info, StorePath: info.Path}},
	}}
	out := render(t, "text", Options{TTY: true}, r)
	if strings.Contains(out, "all clean") || !strings.Contains(out, "no session could be listed") {
		t.Errorf("a database that lists nothing:\n%s", out)
	}
	r.Result.Findings = nil
	if out := render(t, "text", Options{TTY: true}, r); strings.Contains(out, "0 sessions") || !strings.Contains(out, "no sessions") {
		t.Errorf("an empty store:\n%s", out)
	}
}

func TestUnknownFormat(t *testing.T) {
	_, err := New("xml", Options{})
	if err == nil || !strings.Contains(err.Error(), "github, json, junit, sarif, text") {
		t.Errorf("New(xml) error = %v, want one listing the formats", err)
	}
	if got := strings.Join(Formats(), ","); got != "github,json,junit,sarif,text" {
		t.Errorf("Formats() = %s", got)
	}
}

func TestExplainWraps(t *testing.T) {
	long := strings.Repeat("word ", 40) + "end"
	r := &scan.Rule{Code: "SF999", Name: "test-rule", Severity: scan.Warning, Summary: "a summary", What: long,
		Why: "first paragraph\n\nsecond paragraph", Fixable: true, Fix: "injectTextPart"}
	var buf bytes.Buffer
	if err := PrintExplain(&buf, r, NewStyles(false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, l := range strings.Split(out, "\n") {
		if len(l) > explainWidth {
			t.Errorf("line longer than %d: %q", explainWidth, l)
		}
	}
	if got := strings.Join(strings.Fields(out), " "); !strings.Contains(got, strings.Join(strings.Fields(long), " ")) {
		t.Errorf("wrapping lost words:\n%s", out)
	}
	for _, want := range []string{"SF999 test-rule (warning, fixable)\n", "\n  first paragraph\n\n  second paragraph\n", "  default repair: injectTextPart\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "provider error") {
		t.Errorf("empty section printed:\n%s", out)
	}
}

// The explain hint points at a finding that fails the run, never at an info
// finding that happens to be the most frequent (history after a fix).
func TestExplainHintSkipsFindingsThatDoNotFail(t *testing.T) {
	f := func(code string, sev scan.Severity) scan.Finding {
		return scan.Finding{Code: code, Severity: sev, SessionID: "ses_1"}
	}
	r := &Report{FailPolicy: atOrAbove(scan.Warning), Result: &scan.Result{Findings: []scan.Finding{
		f("SF101", scan.Info), f("SF101", scan.Info), f("SF302", scan.Info), f("SF105", scan.Warning),
	}}}
	hints := Hints(r)
	if len(hints) == 0 || !strings.Contains(hints[len(hints)-1], "sessfix explain SF105") {
		t.Errorf("hints = %q, want the explain hint to name SF105", hints)
	}
	r.Result.Findings = r.Result.Findings[:3]
	for _, h := range Hints(r) {
		if strings.Contains(h, "explain") {
			t.Errorf("only info findings: no explain hint expected, got %q", h)
		}
	}
}

// TestExplainHintNamesTheMostFrequentError: the hint's claim holds against
// the list it ends: the most severe failing findings first, then the most
// frequent code among them, named with its count; a tie says so.
func TestExplainHintNamesTheMostFrequentError(t *testing.T) {
	f := func(code string, sev scan.Severity) scan.Finding {
		return scan.Finding{Code: code, Severity: sev, SessionID: "ses_1"}
	}
	for _, c := range []struct {
		findings []scan.Finding
		want     string
	}{
		{[]scan.Finding{f("SF105", scan.Warning), f("SF152", scan.Error), f("SF103", scan.Error), f("SF103", scan.Error), f("SF105", scan.Warning), f("SF105", scan.Warning)},
			"run `sessfix explain SF103` to read about the most frequent error (2 findings)"},
		{[]scan.Finding{f("SF152", scan.Error), f("SF105", scan.Warning), f("SF103", scan.Error), f("SF153", scan.Error), f("SF153", scan.Error)},
			"run `sessfix explain SF153` to read about the most frequent error (2 findings)"},
		{[]scan.Finding{f("SF152", scan.Error), f("SF105", scan.Warning), f("SF103", scan.Error)},
			"run `sessfix explain SF103` to read about one of the most frequent errors (1 finding each)"},
		{[]scan.Finding{f("SF301", scan.Warning), f("SF105", scan.Warning), f("SF301", scan.Warning)},
			"run `sessfix explain SF301` to read about the most frequent warning (2 findings)"},
	} {
		r := &Report{Result: &scan.Result{Findings: c.findings}, FailPolicy: atOrAbove(scan.Warning)}
		hints := Hints(r)
		if got := hints[len(hints)-1]; got != c.want {
			t.Errorf("hint %q, want %q", got, c.want)
		}
	}
}

// TestTextEscapesStoreControlCharacters: ids, paths and stored texts come
// from the store; an escape sequence in one must reach the terminal (or a
// log) as text, not act on it.
func TestTextEscapesStoreControlCharacters(t *testing.T) {
	evil := "\x1b]0;pwned\x07\x1b[2J"
	r := &Report{Result: &scan.Result{
		Stores: []scan.StoreResult{{
			Info:     store.Info{Shape: store.ShapeSQLite, Path: "/x/" + evil + ".db"},
			Sessions: []scan.SessionSummary{{ID: "ses_" + evil, Title: evil}},
		}},
		Findings: []scan.Finding{{
			Code: "SF202", Severity: scan.Warning, Shape: store.ShapeSQLite, StorePath: "/x/" + evil + ".db",
			SessionID: "ses_" + evil, PartID: "prt_" + evil, Message: "part id " + evil,
			ProviderError: "stored " + evil, Location: store.Location{Path: "/x/" + evil + ".db", Table: "part", RowID: 6},
		}},
	}}
	// With colour, only sessfix's own colour codes are escape sequences.
	for _, o := range []Options{{TTY: true}, {}, {TTY: true, Color: true}, {Color: true}} {
		out := ansi.ReplaceAllString(render(t, "text", o, r), "")
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%+v: control characters from the store reach the output:\n%q", o, out)
		}
		if !strings.Contains(out, `part id \x1b]0;pwned\x07\x1b[2J`) {
			t.Errorf("%+v: the message is not shown escaped:\n%s", o, out)
		}
	}
	// A GitHub annotation is shown in the job log; JUnit is XML, which
	// cannot carry these characters at all.
	for _, format := range []string{"github", "junit"} {
		out := render(t, format, Options{}, r)
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s: control characters from the store reach the output:\n%q", format, out)
		}
	}
	var doc struct{}
	if err := xml.Unmarshal([]byte(render(t, "junit", Options{}, r)), &doc); err != nil {
		t.Errorf("junit output is not XML: %v", err)
	}
}

func TestFindingsLineCountsTheSessionsThatHaveFindings(t *testing.T) {
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Sessions: 3}, "no findings in 3 sessions"},
		{Summary{Total: 2, Sessions: 2, Affected: 1}, "2 findings in 1 of 2 sessions"},
		{Summary{Total: 3, Sessions: 2, Affected: 2}, "3 findings in 2 sessions"},
		{Summary{Total: 1, Sessions: 1, Affected: 1}, "1 finding in 1 session"},
		// A finding about the database itself is in no session.
		{Summary{Total: 1, Store: 1, Sessions: 3, Stores: 1}, "1 finding about the store, none in 3 sessions"},
		{Summary{Total: 4, Store: 1, Sessions: 5, Stores: 1, Affected: 2}, "4 findings: 1 about the store, 3 in 2 of 5 sessions"},
		{Summary{Total: 2, Store: 2, Sessions: 0, Stores: 2}, "2 findings about stores, no sessions"},
		{Summary{Total: 0, Sessions: 0, Stores: 1}, "no findings: no sessions"},
	} {
		if got := FindingsLine(c.s); got != c.want {
			t.Errorf("FindingsLine(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestStoreFindingIsNoSession: a finding about the database itself (no
// session) is printed under the store as "database", not as an untitled
// session with 0 messages, and the store's session count leaves it out.
func TestStoreFindingIsNoSession(t *testing.T) {
	out := render(t, "text", Options{TTY: true}, sampleReport())
	if strings.Contains(out, "(untitled)  (0 messages)") || strings.Contains(out, "(0 messages)") {
		t.Errorf("the database's finding is printed as a session:\n%s", out)
	}
	if !strings.Contains(out, "\n  database\n    info    SF504 ") || !strings.Contains(out, "  3 sessions, 1 clean\n") {
		t.Errorf("want the database's finding under the store and 3 sessions counted:\n%s", out)
	}
}
