//go:build acceptance

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
	"github.com/sessfix/sessfix/pkg/opencode"
)

// TestPDFsOverRequestLimit: a user attaches three PDFs to one prompt on
// OpenCode 1.18.33 (`opencode run PROMPT --file a.pdf --file b.pdf --file
// c.pdf`), each 9 MiB (12.6 MB of base64, under every per-file limit
// sessfix knows: SF503 reports parts from 50 MiB), together 37.7 MB of
// request, over Anthropic's 32 MB request size limit. A real run, no edit:
// the strict mock refuses the request with 413 request_too_large.
//
// 1.18.33 takes request_too_large for a context overflow: with its
// default config it compacts at once (the compaction request strips the
// media) and goes on by itself (OBSERVED.md). The session is dead only
// with `compaction: {auto: false}` in the config, as for the context
// window (TestContextWindow): the test sets it. The first run's refused
// attempt is then stored, and every resume sends the three PDFs again.
//
// Both timings, with default flags:
//   - before any resume, on a copy of the store as the first run left it:
//     scan reports SF175 (the preflight, from the stored history) with
//     replaceMedia; `fix --yes` replaces the largest PDF by a text, undo
//     restores the store exactly, the fix made again, and the first resume
//     is accepted with the other two PDFs still sent;
//   - right after a failed resume: the resume is refused with the same
//     413, scan reports SF175 and the stored error, `fix --yes` repairs,
//     undo restores exactly, and the resume after the fix made again is
//     accepted.
func TestPDFsOverRequestLimit(t *testing.T) {
	parallel(t)
	var files []namedFile
	for i, name := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		files = append(files, namedFile{name, testpdf.Write(testpdf.Options{Noise: 9 << 20, Seed: int64(i + 1)})})
	}
	brokenPDFCase(t, pdfCase{
		Case: "pdfs-over-request-limit", Test: "TestPDFsOverRequestLimit", Version: opencodetest.V1_18,
		Config: map[string]any{"compaction": map[string]any{"auto": false}},
		Code:   "SF175", ErrorType: "request_too_large", Predicted: "request_too_large: ", StoredAs: opencode.ContextOverflowName,
		Files:   files,
		Refused: mockanthropic.TextRequestTooLarge, SentAfter: 2, Removed: ".pdf (application/pdf, 9.4 MB)",
		Break: "three PDFs of 9 MiB attached to one prompt (`run --file`), 37.7 MB of request, over Anthropic's 32 MB; a real run, no edit. " +
			"1.18.33 takes the 413 for an overflow and compacts by itself with its default config, so the test sets compaction.auto false; " +
			"before any resume is the store as the refused first run left it",
	})
}

// repairPDFs repairs the data dir with default flags (`fix --yes`), wants
// `undo --last` to restore the store exactly, repairs again, wants no
// finding above info left, and resumes: the mock must accept, with docs
// PDFs still sent and one placeholder of a PDF (its text holds removed).
// It returns the last fix's result.
func repairPDFs(ctx context.Context, t *testing.T, e *opencodetest.Env, session string, docs int, removed string) *sfResult {
	t.Helper()
	fix := replaceMediaUndoRedo(t, e, session)
	n := len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	for _, call := range e.Mock.Requests()[n:] {
		if call.Parsed == nil || !call.Chat {
			continue
		}
		sent, placeholders := 0, 0
		for _, m := range call.Parsed.Messages {
			for _, b := range m.Content {
				sent += boolInt(b.Type == "document" && b.Source != nil && b.Source.MediaType == "application/pdf")
				placeholders += boolInt(b.Type == "text" && strings.HasPrefix(b.Text, "[sessfix removed the file ") && strings.Contains(b.Text, removed))
			}
		}
		if sent != docs || placeholders != 1 || len(call.Body) > mockanthropic.RequestBytesMax {
			t.Errorf("the accepted request sends %d PDFs and %d placeholders in %d bytes; want %d and 1", sent, placeholders, len(call.Body), docs)
		}
	}
	return fix
}

// replaceMediaUndoRedo repairs the data dir with default flags (`fix
// --yes`, which must write replaceMedia), wants `undo --last` to restore
// the store exactly, repairs again and wants nothing above info left in
// the session. It returns the second fix's result.
func replaceMediaUndoRedo(t *testing.T, e *opencodetest.Env, session string) *sfResult {
	t.Helper()
	d := dataDir{t, e.DataDir()}
	broken := storeState(t, d)
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, "replaceMedia") {
		t.Fatalf("fix\n%s", fix)
	}
	if storeState(t, d) == broken {
		t.Fatalf("fix changed nothing\n%s", fix)
	}
	if u := sessfix(t, e, "undo", "--last"); u.ExitCode != 0 || storeState(t, d) != broken {
		t.Fatalf("undo did not restore the store exactly\n%s", u)
	}
	fix = sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix again\n%s", fix)
	}
	after, res := scanStore(t, e, session)
	for _, f := range after {
		if f.Severity != "info" {
			t.Errorf("after fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, res)
		}
	}
	return fix
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPDFsOverPageLimit: a user attaches two PDFs of 70 and 40 pages to
// one prompt, on OpenCode 1.18.33 and on 1.1.65 (`opencode run PROMPT --file a.pdf --file
// b.pdf`), small files: 110 pages, over the 100 pages the Messages API
// takes from a model with a 200k-token window. A real run, no edit: the
// strict mock refuses the request with the API's text, "A maximum of 100
// PDF pages may be provided.", and every resume sends both PDFs again.
// Both timings with default flags (brokenPDFCase): scan reports SF177 (a
// warning: sessfix does not know the model's window) with replaceMedia,
// and `fix --yes` replaces the 70-page PDF; the 40-page one is still sent.
func TestPDFsOverPageLimit(t *testing.T) {
	parallel(t)
	bothVersions(t, pdfCase{
		Case: "pdfs-over-page-limit", Test: "TestPDFsOverPageLimit", Code: "SF177", ErrorType: "pdf_pages",
		Files: []namedFile{
			{"a.pdf", testpdf.Write(testpdf.Options{Pages: 70})},
			{"b.pdf", testpdf.Write(testpdf.Options{Pages: 40, XRefStream: true})},
		},
		Refused: mockanthropic.MsgPDFPages(), SentAfter: 1, Removed: "a.pdf (application/pdf, ",
		Break: "two PDFs of 70 and 40 pages attached to one prompt (`run --file`), 110 pages, over the Messages API's 100; a real run, no edit; " +
			"before any resume is the store as the refused first run left it",
	})
}

// TestInvalidPDF: a user attaches a text file named notes.pdf and a real
// PDF to one prompt, on OpenCode 1.18.33 and on 1.1.65 (`run --file notes.pdf --file
// real.pdf`). A real run, no edit: OpenCode sends both as PDF documents,
// the strict mock refuses the one with no PDF header with the API's text
// ("messages.N.content.M.pdf.source.base64.data: The PDF specified was not
// valid."), and every resume is refused the same way. Both timings with
// default flags (brokenPDFCase): scan reports SF178 with the same text,
// and `fix --yes` replaces notes.pdf by a text; the real PDF is still
// sent.
func TestInvalidPDF(t *testing.T) {
	parallel(t)
	bothVersions(t, pdfCase{
		Case: "text-file-as-pdf", Test: "TestInvalidPDF", Code: "SF178", ErrorType: "invalid_pdf",
		Files: []namedFile{
			{"notes.pdf", []byte("Meeting notes\n- ship the release on Friday\n")},
			{"real.pdf", testpdf.Write(testpdf.Options{Pages: 2})},
		},
		RefusedSuffix: ".pdf.source.base64.data: " + mockanthropic.TextInvalidPDF, SentAfter: 1, Removed: "notes.pdf (application/pdf, ",
		Break: "a text file named notes.pdf and a real PDF attached to one prompt (`run --file`); OpenCode sends both as PDF documents; a real run, no edit; " +
			"before any resume is the store as the refused first run left it",
	})
}

// bothVersions runs c on OpenCode 1.18.33 and on 1.1.65 (whose row is
// c.Case with "-1.1" after it).
func bothVersions(t *testing.T, c pdfCase) {
	for _, v := range []string{opencodetest.V1_18, opencodetest.V1_1} {
		t.Run(v, func(t *testing.T) {
			c := c
			c.Version = v
			if v == opencodetest.V1_1 {
				c.Case += "-1.1"
			}
			brokenPDFCase(t, c)
		})
	}
}

type namedFile struct {
	Name string
	Data []byte
}

// pdfCase is a session OpenCode bricks with the PDFs a user attaches, and
// what sessfix must do about it.
type pdfCase struct {
	Case, Test string
	// Version is the OpenCode version that makes the session, Config its
	// configuration (nil for OpenCode's defaults).
	Version string
	Config  map[string]any
	// Predicted is what sessfix's prediction of the refusal has before the
	// mock's text ("" for the same text); StoredAs is the error name
	// OpenCode stores the refused attempt under ("" for APIError).
	Predicted, StoredAs string
	// Code and ErrorType are the preflight rule that predicts the refusal
	// and the stored error's type.
	Code, ErrorType string
	Files           []namedFile
	// Refused is the mock's text for the first run's request (or, when
	// RefusedSuffix is set, how that text ends).
	Refused, RefusedSuffix string
	// SentAfter is how many PDFs the accepted request still sends, and
	// Removed is in the one placeholder it sends.
	SentAfter int
	Removed   string
	Break     string
}

func (c pdfCase) refused(text string) bool {
	if c.RefusedSuffix != "" {
		return strings.HasSuffix(text, c.RefusedSuffix)
	}
	return text == c.Refused
}

// brokenPDFCase attaches c's files to one prompt with a real run (no
// edit): the mock must refuse it, OpenCode must store the refused attempt
// under c.StoredAs with the mock's text (no compaction), and every resume
// is refused the same way. Both timings, with default flags:
//   - right after a failed resume: scan reports c.Code with the mock's text
//     and the stored error (SF302, c.ErrorType) with replaceMedia; `fix
//     --yes` repairs, undo restores exactly, and the resume after the fix
//     made again is accepted (repairPDFs);
//   - before any resume, on a copy of the store as the first run left it:
//     the same.
func brokenPDFCase(t *testing.T, c pdfCase) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: c.Version, Timeout: 5 * time.Minute, Config: c.Config})
	args := []string{"run", "--format", "json", "Summarise these files."}
	for _, f := range c.Files {
		p := filepath.Join(e.ProjectDir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--file", p)
	}
	before := len(anthropicCalls(e))
	res, err := e.Run(ctx, args...)
	if err != nil {
		t.Fatal(err)
	}
	first := ""
	for _, call := range anthropicCalls(e)[before:] {
		if call.rejected {
			first = call.err
			break
		}
	}
	if !c.refused(first) {
		t.Fatalf("the first run was not refused as expected: %q\n%s", first, res)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	// What the refused attempt leaves: an assistant message whose error is
	// an APIError with the API's text (not an overflow), and no compaction.
	storedErr := ""
	for _, m := range (dataDir{t, e.DataDir()}).session(session) {
		if er, ok := m.Data["error"].(map[string]any); ok {
			data, _ := er["data"].(map[string]any)
			msg, _ := data["message"].(string)
			storedErr = fmt.Sprintf("%v: %s", er["name"], msg)
		}
	}
	storedAs := c.StoredAs
	if storedAs == "" {
		storedAs = "APIError"
	}
	if storedErr != storedAs+": "+first {
		t.Fatalf("the refused attempt stored %q, want %s with the API's text", storedErr, storedAs)
	}
	for _, r := range e.Mock.Requests() {
		if isCompactionRequest(&r) {
			t.Fatal("OpenCode compacted after the refusal")
		}
	}
	saved := saveData(t, e)

	// Right after a failed resume.
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Try again.")
	if rejected != first {
		t.Fatalf("the resume was refused with %q, not as the first run: %q", rejected, first)
	}
	fs, scan := scanStore(t, e, session)
	pre, stored := withCode(fs, c.Code), withCode(fs, "SF302")
	if len(pre) != 1 || pre[0].Fix != "replaceMedia" || pre[0].ProviderError != c.Predicted+rejected ||
		len(stored) == 0 || stored[0].Fix != "replaceMedia" || stored[0].ErrorType != c.ErrorType {
		t.Fatalf("scan does not report the PDFs (%s) and the stored error (SF302, %s) with replaceMedia\n%s", c.Code, c.ErrorType, scan)
	}
	fix := repairPDFs(ctx, t, e, session, c.SentAfter, c.Removed)

	// Before any resume: the store as the first run left it.
	b := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout, Config: c.Config})
	if err := b.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	b.ProjectDir = e.ProjectDir
	fs0, scan0 := scanStore(t, b, session)
	if pre := withCode(fs0, c.Code); len(pre) != 1 || pre[0].Fix != "replaceMedia" || pre[0].ProviderError != c.Predicted+rejected {
		t.Fatalf("before any resume, scan does not report %s with the mock's text\n%s", c.Code, scan0)
	}
	fix0 := repairPDFs(ctx, t, b, session, c.SentAfter, c.Removed)
	recordWedged(t, wedgedRow{
		Case: c.Case, Test: c.Test, OpenCode: c.Version, Model: e.Model, Break: c.Break,
		Before: rejectedAs(blockIndexRe.ReplaceAllString(rejected, "messages.N.content.M")), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(fs0)), Fix: wroteMutations(fix0.Stdout + fix0.Stderr), After: "accepted"},
	})
}

// blockIndexRe finds a block's index in a provider's text: where OpenCode
// puts an attached file among the prompt's blocks is not fixed (1.1.65
// sent notes.pdf at content.3 in one run and content.4 in another), so the
// row names none; the test itself wants sessfix's prediction to equal the
// mock's text, index and all.
var blockIndexRe = regexp.MustCompile(`messages\.\d+\.content\.\d+`)
