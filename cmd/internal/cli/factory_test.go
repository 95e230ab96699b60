package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/report"
)

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteDocument(t *testing.T) {
	doc := map[string]any{"version": "1.0", "sessions": []string{"ses_a"}}
	var want bytes.Buffer
	if err := report.WriteJSON(&want, doc); err != nil {
		t.Fatal(err)
	}

	// To stdout: the document as report.WriteJSON writes it.
	ios, _, out, _ := iostreams.Test()
	f := &Factory{IOStreams: ios, Globals: &Globals{}}
	if err := f.WriteDocument(doc); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("stdout = %q, want %q", out, want.String())
	}

	// To the --output file, and nothing on stdout.
	out.Reset()
	path := filepath.Join(t.TempDir(), "doc.json")
	f.Globals.Output = path
	if err := f.WriteDocument(doc); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() || out.Len() != 0 {
		t.Errorf("--output file = %q, stdout = %q; want the document in the file only", got, out)
	}

	// A file that cannot be created: the reason and a hint.
	f.Globals.Output = filepath.Join(t.TempDir(), "no", "dir", "doc.json")
	err = f.WriteDocument(doc)
	if err == nil || !strings.Contains(err.Error(), "cannot write the report to "+f.Globals.Output) || len(Hints(err)) == 0 {
		t.Errorf("missing directory: err = %v, hints %q", err, Hints(err))
	}

	// A write that fails is the command's error, not lost.
	ios.Out = failingWriter{}
	f.Globals.Output = ""
	err = f.WriteDocument(doc)
	if err == nil || err.Error() != "cannot write the report: broken pipe" {
		t.Errorf("failed write: err = %v, want %q", err, "cannot write the report: broken pipe")
	}
}
