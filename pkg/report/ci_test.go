package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// ciOpts are the options the CI-format goldens render with: the sessions
// tree and the export file lie under /home/u, the database does not.
var ciOpts = Options{BaseDir: "/home/u"}

// suppressedReport is sampleReport with one finding suppressed by a config
// file and fail-on lowered to info.
func suppressedReport() *Report {
	r := sampleReport()
	r.Result.Findings[2].Suppression = &scan.Suppression{Reason: "kept on purpose: the fixture shows a whitespace-only part", Source: "/home/u/.sessfix.yaml"}
	r.FailPolicy = atOrAbove(scan.Info)
	return r
}

func TestCIFormatGoldens(t *testing.T) {
	for _, format := range []string{"sarif", "github", "junit", "json"} {
		t.Run(format, func(t *testing.T) {
			golden(t, "ci."+format+".golden", render(t, format, ciOpts, sampleReport()))
			golden(t, "ci-suppressed."+format+".golden", render(t, format, ciOpts, suppressedReport()))
		})
	}
}

func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile("testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateSARIF(t *testing.T, sch *jsonschema.Schema, doc string) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("sarif output is not JSON: %v", err)
	}
	return sch.Validate(inst)
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	sch := sarifSchema(t)
	empty := &Report{Version: "1.0.0", Result: &scan.Result{}}
	for name, r := range map[string]*Report{"sample": sampleReport(), "suppressed": suppressedReport(), "empty": empty} {
		for _, opts := range []Options{{}, ciOpts} {
			if err := validateSARIF(t, sch, render(t, "sarif", opts, r)); err != nil {
				t.Errorf("%s (base %q): invalid SARIF: %v", name, opts.BaseDir, err)
			}
		}
	}
}

// TestSchemaRejectsBrokenSARIF shows the validation can fail: a result
// with an unknown level and a log without version are rejected.
func TestSchemaRejectsBrokenSARIF(t *testing.T) {
	sch := sarifSchema(t)
	good := render(t, "sarif", ciOpts, sampleReport())
	for name, bad := range map[string]string{
		"bad level":  strings.Replace(good, `"level": "note"`, `"level": "info"`, 1),
		"no version": strings.Replace(good, `"version": "2.1.0",`, ``, 1),
	} {
		if bad == good {
			t.Fatalf("%s: the mutation did not apply", name)
		}
		if validateSARIF(t, sch, bad) == nil {
			t.Errorf("%s: the schema accepted it", name)
		}
	}
}

type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name  string `json:"name"`
				Rules []struct {
					ID      string `json:"id"`
					Name    string `json:"name"`
					HelpURI string `json:"helpUri"`
					Config  struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				Physical struct {
					Artifact struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region *struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
				Logical []struct {
					FullyQualifiedName string `json:"fullyQualifiedName"`
				} `json:"logicalLocations"`
			} `json:"locations"`
			Suppressions []struct {
				Kind          string `json:"kind"`
				Justification string `json:"justification"`
			} `json:"suppressions"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
		} `json:"results"`
	} `json:"runs"`
}

func decodeSARIF(t *testing.T, doc string) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal([]byte(doc), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%d runs, want 1", len(log.Runs))
	}
	return log
}

func TestSARIFMapsFindings(t *testing.T) {
	r := suppressedReport()
	log := decodeSARIF(t, render(t, "sarif", ciOpts, r))
	run := log.Runs[0]
	if log.Version != "2.1.0" || run.Tool.Driver.Name != "sessfix" {
		t.Errorf("version %q, tool %q", log.Version, run.Tool.Driver.Name)
	}
	if len(run.Results) != len(r.Result.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(r.Result.Findings))
	}
	wantLevel := map[scan.Severity]string{scan.Error: "error", scan.Warning: "warning", scan.Info: "note"}
	for i, f := range r.Result.Findings {
		res := run.Results[i]
		if res.RuleID != f.Code || res.Level != wantLevel[f.Severity] || res.Message.Text != f.Message {
			t.Errorf("result %d = %s %s %q, want %s %s %q", i, res.RuleID, res.Level, res.Message.Text, f.Code, wantLevel[f.Severity], f.Message)
		}
		if got := run.Tool.Driver.Rules[res.RuleIndex].ID; got != f.Code {
			t.Errorf("result %d: ruleIndex points at %s, want %s", i, got, f.Code)
		}
		loc := res.Locations[0]
		if f.Location.Line > 0 && (loc.Physical.Region == nil || loc.Physical.Region.StartLine != f.Location.Line) {
			t.Errorf("result %d: region %+v, want startLine %d", i, loc.Physical.Region, f.Location.Line)
		}
		if f.Location.Line == 0 && loc.Physical.Region != nil {
			t.Errorf("result %d: a region without a line", i)
		}
		switch want := idPath(f.SessionID, f.MessageID, f.PartID); {
		case want == "" && len(loc.Logical) != 0:
			t.Errorf("result %d: a finding about the store has logical locations %+v", i, loc.Logical)
		case want != "" && (len(loc.Logical) == 0 || loc.Logical[0].FullyQualifiedName != want):
			t.Errorf("result %d: logical location %+v, want %q", i, loc.Logical, want)
		}
		if (len(res.Suppressions) == 1) != f.Suppressed() {
			t.Errorf("result %d: suppressions %+v for suppressed=%v", i, res.Suppressions, f.Suppressed())
		}
		if f.Suppressed() && (res.Suppressions[0].Justification != f.Suppression.Reason || res.Suppressions[0].Kind != "external") {
			t.Errorf("result %d: suppression %+v", i, res.Suppressions[0])
		}
		if res.PartialFingerprints[fingerprintKey] != Fingerprint(f) {
			t.Errorf("result %d: fingerprint %v", i, res.PartialFingerprints)
		}
	}
	// Under the base dir: relative to %SRCROOT%; elsewhere: a file URI.
	if a := run.Results[5].Locations[0].Physical.Artifact; a.URI != ".opencode/sessions/ses_d/messages/msg_4.json" || a.URIBaseID != "%SRCROOT%" {
		t.Errorf("tree location = %+v", a)
	}
	if a := run.Results[0].Locations[0].Physical.Artifact; a.URI != "file:///data/opencode/opencode.db" || a.URIBaseID != "" {
		t.Errorf("database location = %+v", a)
	}
}

// TestSARIFHelpLinksMatchRulesDoc checks that every rule's helpUri anchor is
// the anchor of a heading in docs/rules.md.
func TestSARIFHelpLinksMatchRulesDoc(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rules.md")
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), "## "); ok {
			anchors[githubAnchor(h)] = true
		}
	}
	var fs []scan.Finding
	for _, r := range scan.Rules() {
		if r.What == "" {
			continue // not documented in docs/rules.md yet
		}
		fs = append(fs, scan.Finding{Code: r.Code, Rule: r.Name, Severity: r.Severity, Message: "x", SessionID: "ses_x"})
	}
	if len(fs) == 0 {
		t.Fatal("no documented rules")
	}
	log := decodeSARIF(t, render(t, "sarif", Options{}, &Report{Result: &scan.Result{Findings: fs}}))
	rules := log.Runs[0].Tool.Driver.Rules
	if len(rules) != len(fs) {
		t.Fatalf("%d rules for %d codes", len(rules), len(fs))
	}
	for _, r := range rules {
		base, anchor, _ := strings.Cut(r.HelpURI, "#")
		if base != RulesDocURL || !anchors[anchor] {
			t.Errorf("%s: helpUri %s has no heading in docs/rules.md", r.ID, r.HelpURI)
		}
		if want := SARIFLevel(scan.Lookup(r.ID).Severity); r.Config.Level != want {
			t.Errorf("%s: default level %q, want %q", r.ID, r.Config.Level, want)
		}
	}
}

// githubAnchor is the anchor GitHub renders for a markdown heading:
// lowercase, spaces to hyphens, punctuation other than - and _ dropped.
func githubAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

var annotation = regexp.MustCompile(`^::(error|warning|notice) file=([^,:]+)(?:,line=(\d+))?,title=([^,:]+)::(.*)$`)

func TestGitHubAnnotations(t *testing.T) {
	r := suppressedReport()
	out := render(t, "github", ciOpts, r)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var active []scan.Finding
	for _, f := range r.Result.Findings {
		if !f.Suppressed() {
			active = append(active, f)
		}
	}
	if len(lines) != len(active) {
		t.Fatalf("%d annotations for %d unsuppressed findings:\n%s", len(lines), len(active), out)
	}
	for i, f := range active {
		m := annotation.FindStringSubmatch(lines[i])
		if m == nil {
			t.Errorf("not a workflow command: %q", lines[i])
			continue
		}
		if m[1] != GitHubCommand(f.Severity) {
			t.Errorf("%q: command %s for %s", lines[i], m[1], f.Severity)
		}
		if want := relPath(ciOpts.BaseDir, f.Location.Path); m[2] != want {
			t.Errorf("%q: file %s, want %s", lines[i], m[2], want)
		}
		if f.Location.Line > 0 && m[3] != strconv.Itoa(f.Location.Line) {
			t.Errorf("%q: line %s, want %d", lines[i], m[3], f.Location.Line)
		}
		if !strings.HasPrefix(m[5], f.Message) {
			t.Errorf("%q: message does not start with %q", lines[i], f.Message)
		}
		if strings.ContainsAny(m[5], "\r\n") {
			t.Errorf("%q: unescaped newline", lines[i])
		}
	}
}

func TestGitHubEscaping(t *testing.T) {
	if got, want := escapeGitHubData("50% done\r\nnext: a, b"), "50%25 done%0D%0Anext: a, b"; got != want {
		t.Errorf("data: %q, want %q", got, want)
	}
	if got, want := escapeGitHubProperty("C:\\dir,x/50%.json"), "C%3A\\dir%2Cx/50%25.json"; got != want {
		t.Errorf("property: %q, want %q", got, want)
	}
	f := scan.Finding{Code: "SF104", Rule: "empty-text-part", Severity: scan.Warning, Message: "text part is empty",
		Shape: store.ShapeSessions, Location: store.Location{Path: "/w/odd, name:1.json", Line: 1}}
	got := githubPrinter{base: "/w"}.annotation(&Report{}, f)
	if want := "::warning file=odd%2C name%3A1.json,line=1,title=SF104 empty-text-part::text part is empty"; got != want {
		t.Errorf("annotation = %q, want %q", got, want)
	}
}

type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name     string `xml:"name,attr"`
			Failures []struct {
				Type string `xml:"type,attr"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitStructure(t *testing.T) {
	r := suppressedReport()
	var doc junitDoc
	if err := xml.Unmarshal([]byte(render(t, "junit", ciOpts, r)), &doc); err != nil {
		t.Fatalf("junit output is not XML: %v", err)
	}
	if len(doc.Suites) != len(r.Result.Stores) {
		t.Fatalf("%d suites for %d stores", len(doc.Suites), len(r.Result.Stores))
	}
	sessions, failing := 0, 0
	for _, sr := range r.Result.Stores {
		sessions += len(sr.Sessions)
	}
	for _, f := range r.Result.Findings {
		if r.fails(f) {
			failing++
		}
	}
	// One testcase per session, and one for the database's own finding
	// (SF504), named for the database, not a session.
	if doc.Tests != sessions+1 || doc.Failures != failing {
		t.Errorf("tests=%d failures=%d, want %d and %d", doc.Tests, doc.Failures, sessions+1, failing)
	}
	if d := doc.Suites[0].Cases[0]; d.Name != "database" || len(d.Failures) != 1 {
		t.Errorf("the database's testcase = %+v", d)
	}
	// ses_a: SF103 and SF302 fail; the suppressed SF104 is listed only.
	a := doc.Suites[0].Cases[1]
	if !strings.HasPrefix(a.Name, "ses_a") || len(a.Failures) != 2 || !strings.Contains(a.SystemOut, "suppressed:") {
		t.Errorf("ses_a testcase = %+v", a)
	}
	if c := doc.Suites[0].Cases[3]; !strings.HasPrefix(c.Name, "ses_c") || len(c.Failures) != 0 {
		t.Errorf("clean session ses_c = %+v", c)
	}
}

func TestJUnitBelowFailOnIsNotAFailure(t *testing.T) {
	r := sampleReport()
	r.FailPolicy = atOrAbove(scan.Error)
	var doc junitDoc
	if err := xml.Unmarshal([]byte(render(t, "junit", ciOpts, r)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != r.Failing() || doc.Failures != 3 {
		t.Errorf("failures = %d, want %d (errors only)", doc.Failures, r.Failing())
	}
}

// TestReportCountsWhatItsPolicyFails: the findings that fail are the
// policy's (cli.FailPolicy's --fail-on), suppressed ones never; with no
// policy none fail and the JSON names none.
func TestReportCountsWhatItsPolicyFails(t *testing.T) {
	r := suppressedReport()
	if s := r.Summarize(); s.Suppressed != 1 || s.Total != len(r.Result.Findings)-1 || s.Failing != s.Total || r.Failing() != s.Total {
		t.Errorf("summary with one suppressed finding = %+v", s)
	}
	if sum := decode(t, r)["summary"].(map[string]any); sum["fail_on"] != "info" || sum["failing"] != float64(r.Failing()) {
		t.Errorf("summary %v, want fail_on info, failing %d", sum, r.Failing())
	}
	r.FailPolicy = nil
	if s := r.Summarize(); r.Failing() != 0 || s.Failing != 0 {
		t.Errorf("no policy: failing %d/%d, want none", r.Failing(), s.Failing)
	}
	if sum := decode(t, r)["summary"].(map[string]any); sum["fail_on"] != "" || sum["failing"] != 0.0 {
		t.Errorf("no policy: summary %v", sum)
	}
}

// failedReport is a scan of one store with findings, one store whose
// sessions could not be listed, and one input that could not be opened
// as any store.
func failedReport() *Report {
	r := sampleReport()
	r.Result.Stores = append(r.Result.Stores,
		scan.StoreResult{Info: store.Info{Shape: store.ShapeStorage, Path: "/s/storage"}, Err: errors.New("cannot read /s/storage/session: permission denied")},
		scan.StoreResult{Info: store.Info{Path: "notes.txt"}, Err: errors.New("notes.txt is not an sqlite database, and not an export file")})
	return r
}

// A store that could not be read is in every format that has a place for
// an error of the run, beside the findings of the others.
func TestStoreErrorsInEveryFormat(t *testing.T) {
	r := failedReport()
	sarifOut := render(t, "sarif", ciOpts, r)
	if err := validateSARIF(t, sarifSchema(t), sarifOut); err != nil {
		t.Fatalf("invalid SARIF: %v", err)
	}
	var log struct {
		Runs []struct {
			Results     []any `json:"results"`
			Invocations []struct {
				ExecutionSuccessful bool `json:"executionSuccessful"`
				Notifications       []struct {
					Level   string `json:"level"`
					Message struct {
						Text string `json:"text"`
					} `json:"message"`
				} `json:"toolExecutionNotifications"`
			} `json:"invocations"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(sarifOut), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Results) != len(r.Result.Findings) || len(run.Invocations) != 1 || run.Invocations[0].ExecutionSuccessful ||
		len(run.Invocations[0].Notifications) != 2 ||
		run.Invocations[0].Notifications[0].Message.Text != "cannot list the sessions of storage store /s/storage: cannot read /s/storage/session: permission denied" ||
		run.Invocations[0].Notifications[1].Message.Text != "notes.txt is not an sqlite database, and not an export file" ||
		run.Invocations[0].Notifications[1].Level != "error" {
		t.Errorf("SARIF run: %+v", run)
	}
	if clean := render(t, "sarif", ciOpts, sampleReport()); strings.Contains(clean, "invocations") {
		t.Error("a scan without store errors has an invocation")
	}

	gh := render(t, "github", ciOpts, r)
	for _, want := range []string{
		"::error file=/s/storage,title=sessfix::cannot list the sessions of storage store /s/storage: cannot read /s/storage/session: permission denied\n",
		"::error file=notes.txt,title=sessfix::notes.txt is not an sqlite database, and not an export file\n",
	} {
		if !strings.Contains(gh, want) {
			t.Errorf("github output lacks %q:\n%s", want, gh)
		}
	}

	junit := render(t, "junit", ciOpts, r)
	for _, want := range []string{`<testsuite name="notes.txt"`, `<error message="cannot open it as an opencode store" type="input"><![CDATA[notes.txt is not an sqlite database`} {
		if !strings.Contains(junit, want) {
			t.Errorf("junit output lacks %q:\n%s", want, junit)
		}
	}

	var doc JSONDocument
	if err := json.Unmarshal([]byte(render(t, "json", Options{}, r)), &doc); err != nil {
		t.Fatal(err)
	}
	last := doc.Stores[len(doc.Stores)-1]
	if last.Shape != "" || last.Path != "notes.txt" || !strings.HasPrefix(last.Error, "notes.txt is not") || len(last.Sessions) != 0 {
		t.Errorf("json store of the input that did not open: %+v", last)
	}

	tty := render(t, "text", Options{TTY: true}, r)
	if !strings.Contains(tty, "\nnotes.txt\n  error: notes.txt is not an sqlite database") {
		t.Errorf("terminal output:\n%s", tty)
	}
}

// TestCIFormatsPromiseOnlyRepairsFixWrites: the github and junit formats
// tell a finding's reader to run `sessfix fix` only when fix repairs it:
// not for a finding of a store fix never writes (Report.ReadOnly: an
// OpenCode 2 database), though the rule has a repair.
func TestCIFormatsPromiseOnlyRepairsFixWrites(t *testing.T) {
	f := scan.Finding{Code: "SF151", Rule: "blank-text", Severity: scan.Error, Message: "user message sends a whitespace-only text block",
		Fix: "replaceEmptyTextParts", Shape: store.ShapeSQLite2, Store: store.Info{Shape: store.ShapeSQLite2, Path: "/w/opencode.db"},
		StorePath: "/w/opencode.db", Location: store.Location{Path: "/w/opencode.db", Table: "part", RowID: 3}}
	for _, readOnly := range []bool{false, true} {
		r := &Report{Result: &scan.Result{Findings: []scan.Finding{f}}}
		if readOnly {
			r.ReadOnly = func(info store.Info) bool { return info.Shape == store.ShapeSQLite2 }
		}
		for _, format := range []string{"github", "junit"} {
			var b bytes.Buffer
			p, err := New(format, Options{BaseDir: "/w"})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Print(&b, r); err != nil {
				t.Fatal(err)
			}
			if promised := strings.Contains(b.String(), "sessfix fix"); promised == readOnly {
				t.Errorf("%s, read only %v: promises a fix %v:\n%s", format, readOnly, promised, b.String())
			}
		}
	}
}
