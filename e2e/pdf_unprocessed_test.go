//go:build acceptance

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
	"github.com/sessfix/sessfix/pkg/scan"
)

// unreadableMarker marks the PDF the mock cannot process: appended after
// the PDF's end, where readers do not look.
var unreadableMarker = []byte("%sessfix-test-unreadable-pdf")

// TestUnprocessedPDF: Anthropic's "Could not process PDF" on real OpenCode
// 1.18.33. A first turn attaches old.pdf (`run --file`), which the mock
// accepts; a second turn attaches new.pdf, which the mock is told it cannot
// read (the API's reasons are not known, so the mock is given the PDF): the
// turn is refused, OpenCode stores the failed attempt, and every resume is
// refused again. A real run, no edit. scan names new.pdf (SF179, not
// old.pdf, which an accepted request held) and maps the stored error to it
// (SF302); `fix --yes` with default flags replaces new.pdf by a text saying
// what was removed, undo restores the store exactly, and after the repair
// made again the resume is accepted, old.pdf still sent. The other timing
// (before any resume) does not exist for this error: nothing predicts what
// the API cannot read. TestUnprocessedPDF11 runs the same on 1.1.65 (JSON
// storage).
func TestUnprocessedPDF(t *testing.T) {
	parallel(t)
	unprocessedPDF(t, opencodetest.V1_18, "pdf-not-processed")
}

func TestUnprocessedPDF11(t *testing.T) {
	parallel(t)
	unprocessedPDF(t, opencodetest.V1_1, "pdf-not-processed-1.1")
}

func unprocessedPDF(t *testing.T, version, rowCase string) {
	acquire(t)
	ctx := testCtx(t, 12*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: version, Timeout: 4 * time.Minute})
	oldPDF := filepath.Join(e.ProjectDir, "old.pdf")
	newPDF := filepath.Join(e.ProjectDir, "new.pdf")
	if err := os.WriteFile(oldPDF, testpdf.Write(testpdf.Options{Pages: 2}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(newPDF, append(testpdf.Write(testpdf.Options{Pages: 3, XRefStream: true}), unreadableMarker...), 0o644); err != nil {
		t.Fatal(err)
	}
	// The prompt goes before --file, which takes every argument after it.
	res, err := e.Run(ctx, "run", "--format", "json", "What is in this PDF?", "--file", oldPDF)
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID
	if sid == "" {
		sid = onlySession(t, e)
	}
	if res.ExitCode != 0 {
		t.Fatalf("the first turn with old.pdf\n%s", res)
	}
	e.Mock.SetUnreadablePDF(unreadableMarker)
	n := len(anthropicCalls(e))
	if _, err := e.Run(ctx, "run", "--format", "json", "--session", sid, "And in this one?", "--file", newPDF); err != nil {
		t.Fatal(err)
	}
	refused := ""
	for _, c := range anthropicCalls(e)[n:] {
		if c.rejected {
			refused = c.err
		}
	}
	if refused != mockanthropic.TextPDFUnprocessable {
		t.Fatalf("the turn with new.pdf: refused with %q, want %q", refused, mockanthropic.TextPDFUnprocessable)
	}
	before := resumeVerdict(ctx, t, e, anthropicCalls, sid, "Try again.")
	if before != mockanthropic.TextPDFUnprocessable {
		t.Fatalf("the resume after the refusal: %q", before)
	}
	fs, out := sessionFindings(t, e, sid)
	pdfs := withCode(fs, scan.SF179)
	if len(pdfs) != 1 || pdfs[0].Fix != "replaceMedia" || !strings.Contains(pdfs[0].Message, "new.pdf") || strings.Contains(pdfs[0].Message, "old.pdf") {
		t.Fatalf("scan does not name new.pdf alone (SF179)\n%s", out)
	}
	if f := withCode(fs, scan.SF302); len(f) != 1 || f[0].Fix != "replaceMedia" || f[0].ErrorType != "pdf_unprocessable" {
		t.Fatalf("scan does not map the stored error to replaceMedia (SF302)\n%s", out)
	}
	// fix, undo exact, fix again, nothing above info, and the resume is
	// accepted with old.pdf still sent and new.pdf's placeholder.
	fix := repairPDFs(ctx, t, e, sid, 1, "new.pdf")
	recordWedged(t, wedgedRow{
		Case: rowCase, Test: t.Name(), OpenCode: version, Model: e.Model,
		Break: "a second turn attaches new.pdf (`run --file`), which the mock is told it cannot read (the API gives `Could not process PDF` " +
			"for reasons users could not find); old.pdf from the first turn was accepted; a real run, no edit",
		Before: rejectedAs(before), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}
