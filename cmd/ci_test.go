package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/report"
)

// inDir makes the factory's working directory dir (absolute).
func inDir(t *testing.T, dir string) func(*cli.Factory, *iostreams.IOStreams) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return func(f *cli.Factory, _ *iostreams.IOStreams) {
		f.Getwd = func() (string, error) { return abs, nil }
	}
}

// TestScanCIFormatGoldens scans the fixture stores once per format: the
// same findings feed every golden.
func TestScanCIFormatGoldens(t *testing.T) {
	absBroken, _ := filepath.Abs(broken)
	for _, format := range []string{"sarif", "github", "junit", "json"} {
		t.Run(format, func(t *testing.T) {
			r := run(t, inDir(t, "."), "scan", "--format", format, broken, healthy)
			if r.code != ExitFindings {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			golden(t, filepath.Join("ci", "scan."+format+".golden"), r.stdout)
			if format == "sarif" {
				validateSARIF(t, r.stdout)
			}
			if format == "json" {
				return // JSON keeps paths as given
			}
			// Absolute paths inside the working directory come out
			// relative, exactly as if given relative.
			abs := run(t, inDir(t, "."), "scan", "--format", format, absBroken, healthy)
			if abs.stdout != r.stdout {
				t.Errorf("an absolute path under the working directory changes the %s output", format)
			}
		})
	}
}

// validateSARIF validates a SARIF log against the 2.1.0 schema vendored in
// pkg/report.
func validateSARIF(t *testing.T, doc string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile("../pkg/report/testdata/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("sarif output is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("invalid SARIF: %v", err)
	}
}

var annotationRE = regexp.MustCompile(`^::(error|warning|notice) file=([^,]+),line=(\d+),title=(SF\d+) [a-z-]+::(.*)$`)

// TestGitHubAnnotationsPointAtRecords checks every annotation of an export
// file and of a sessions tree: the file exists relative to the working
// directory, and the line is where the finding's record starts.
func TestGitHubAnnotationsPointAtRecords(t *testing.T) {
	// The export file: the JSON on disk tells which record starts at the
	// annotated line.
	jr := run(t, inDir(t, "."), "scan", "--format", "json", broken)
	var doc report.JSONDocument
	if err := json.Unmarshal([]byte(jr.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	gr := run(t, inDir(t, "."), "scan", "--format", "github", broken)
	lines := strings.Split(strings.TrimSpace(gr.stdout), "\n")
	if len(lines) != len(doc.Findings) || len(lines) == 0 {
		t.Fatalf("%d annotations for %d findings", len(lines), len(doc.Findings))
	}
	src, err := os.ReadFile(broken)
	if err != nil {
		t.Fatal(err)
	}
	fileLines := strings.Split(string(src), "\n")
	for i, l := range lines {
		m := annotationRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not an annotation with a line: %q", l)
		}
		f := doc.Findings[i]
		if m[2] != broken || m[4] != f.Code {
			t.Errorf("annotation %d: file %s code %s, want %s %s", i, m[2], m[4], broken, f.Code)
		}
		n, _ := strconv.Atoi(m[3])
		id := f.PartID
		if id == "" {
			id = f.MessageID
		}
		if got := firstIDFrom(fileLines, n); got != id {
			t.Errorf("annotation %d (%s) at line %d: the record there is %q, want %q", i, f.Code, n, got, id)
		}
	}

	// A sessions tree: one record per file, line 1, path relative to the
	// working directory (the repository root here).
	demo, _ := filepath.Abs("../testdata/demo")
	tr := run(t, inDir(t, ".."), "scan", "--format", "github", demo)
	if tr.code != ExitFindings {
		t.Fatalf("demo: exit %d: %s", tr.code, tr.stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(tr.stdout), "\n") {
		m := annotationRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not an annotation with a line: %q", l)
		}
		if m[3] != "1" || !strings.HasPrefix(m[2], "testdata/demo/sessions/") || !strings.HasSuffix(m[2], ".json") {
			t.Errorf("annotation %q: want a file under testdata/demo at line 1", l)
		}
		if _, err := os.Stat(filepath.Join("..", m[2])); err != nil {
			t.Errorf("annotation %q names a missing file: %v", l, err)
		}
	}
}

// firstIDFrom returns the first "id" value at or after 1-based line n, the
// id of the record whose opening brace is on line n.
func firstIDFrom(lines []string, n int) string {
	re := regexp.MustCompile(`"id":\s*"([^"]+)"`)
	if n < 1 || n > len(lines) || strings.TrimSpace(lines[n-1]) != "{" && !strings.HasSuffix(strings.TrimSpace(lines[n-1]), "{") {
		return "(no record starts on that line)"
	}
	for _, l := range lines[n-1:] {
		if m := re.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	return ""
}
