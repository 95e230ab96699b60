//go:build acceptance

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
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
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	noAuto := map[string]any{"compaction": map[string]any{"auto": false}}
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 5 * time.Minute, Config: noAuto})
	args := []string{"run", "--format", "json", "Summarise these papers."}
	for i, name := range []string{"a.pdf", "b.pdf", "c.pdf"} {
		p := filepath.Join(e.ProjectDir, name)
		if err := os.WriteFile(p, testpdf.Write(testpdf.Options{Noise: 9 << 20, Seed: int64(i + 1)}), 0o644); err != nil {
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
	for _, c := range anthropicCalls(e)[before:] {
		if c.rejected {
			first = c.err
			break
		}
	}
	if first != mockanthropic.TextRequestTooLarge {
		t.Fatalf("the first run was not refused for its size: %q\n%s", first, res)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	// What the refused attempt leaves: an assistant message whose error is
	// OpenCode's ContextOverflowError with the API's text, and no
	// compaction.
	overflow := ""
	for _, m := range (dataDir{t, e.DataDir()}).session(session) {
		if er, ok := m.Data["error"].(map[string]any); ok {
			data, _ := er["data"].(map[string]any)
			msg, _ := data["message"].(string)
			overflow = fmt.Sprintf("%v: %s", er["name"], msg)
		}
	}
	if !strings.HasPrefix(overflow, "ContextOverflowError: ") || !strings.Contains(overflow, mockanthropic.TextRequestTooLarge) {
		t.Fatalf("the refused attempt stored %q, want a ContextOverflowError with the API's text", overflow)
	}
	t.Logf("stored: %s", overflow)
	for _, r := range e.Mock.Requests() {
		if isCompactionRequest(&r) {
			t.Fatal("OpenCode compacted with compaction.auto false")
		}
	}
	saved := saveData(t, e)

	// Right after a failed resume.
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Try again.")
	if rejected != mockanthropic.TextRequestTooLarge {
		t.Fatalf("the resume was not refused for its size: %q", rejected)
	}
	fs, scan := scanStore(t, e, session)
	pre, stored := withCode(fs, "SF175"), withCode(fs, "SF302")
	if len(pre) != 1 || pre[0].Fix != "replaceMedia" || !strings.HasSuffix(pre[0].ProviderError, rejected) ||
		len(stored) == 0 || stored[0].Fix != "replaceMedia" || stored[0].ErrorType != "request_too_large" {
		t.Fatalf("scan does not report the PDFs (SF175) and the stored error (SF302, request_too_large) with replaceMedia\n%s", scan)
	}
	fix := repairPDFs(ctx, t, e, session, 2, ".pdf (application/pdf, 9.4 MB)")

	// Before any resume: the store as the first run left it.
	c := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout, Config: noAuto})
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	fs0, scan0 := scanStore(t, c, session)
	if pre := withCode(fs0, "SF175"); len(pre) != 1 || pre[0].Fix != "replaceMedia" || !strings.HasSuffix(pre[0].ProviderError, rejected) {
		t.Fatalf("before any resume, scan does not report SF175 with the mock's text\n%s", scan0)
	}
	fix0 := repairPDFs(ctx, t, c, session, 2, ".pdf (application/pdf, 9.4 MB)")
	recordWedged(t, wedgedRow{
		Case: "pdfs-over-request-limit", Test: "TestPDFsOverRequestLimit", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "three PDFs of 9 MiB attached to one prompt (`run --file`), 37.7 MB of request, over Anthropic's 32 MB; a real run, no edit. " +
			"1.18.33 takes the 413 for an overflow and compacts by itself with its default config, so the test sets compaction.auto false; " +
			"before any resume is the store as the refused first run left it",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(fs0)), Fix: wroteMutations(fix0.Stdout + fix0.Stderr), After: "accepted"},
	})
}

// repairPDFs repairs the data dir with default flags (`fix --yes`), wants
// `undo --last` to restore the store exactly, repairs again, wants no
// finding above info left, and resumes: the mock must accept, with docs
// PDFs still sent and one placeholder of a PDF (its text holds removed).
// It returns the last fix's result.
func repairPDFs(ctx context.Context, t *testing.T, e *opencodetest.Env, session string, docs int, removed string) *sfResult {
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

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestPDFsOverPageLimit: a user attaches two PDFs of 70 and 40 pages to
// one prompt on OpenCode 1.18.33 (`opencode run PROMPT --file a.pdf --file
// b.pdf`), small files: 110 pages, over the 100 pages the Messages API
// takes from a model with a 200k-token window. A real run, no edit: the
// strict mock refuses the request with the API's text, "A maximum of 100
// PDF pages may be provided.", and every resume sends both PDFs again.
//
// Both timings, with default flags:
//   - before any resume, on a copy of the store as the first run left it:
//     scan reports SF177 (a warning: sessfix does not know the model's
//     window) with replaceMedia; `fix --yes` replaces the 70-page PDF by a
//     text, undo restores the store exactly, the fix made again, and the
//     first resume is accepted with the 40-page PDF still sent;
//   - right after a failed resume: the resume is refused with the same
//     text, scan reports SF177 and the stored error (SF302, pdf_pages),
//     `fix --yes` repairs, undo restores exactly, and the resume after the
//     fix made again is accepted.
func TestPDFsOverPageLimit(t *testing.T) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 5 * time.Minute})
	args := []string{"run", "--format", "json", "Summarise these manuals."}
	for i, pages := range []int{70, 40} {
		p := filepath.Join(e.ProjectDir, string(rune('a'+i))+".pdf")
		if err := os.WriteFile(p, testpdf.Write(testpdf.Options{Pages: pages, XRefStream: i == 1}), 0o644); err != nil {
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
	for _, c := range anthropicCalls(e)[before:] {
		if c.rejected {
			first = c.err
			break
		}
	}
	if first != mockanthropic.MsgPDFPages() {
		t.Fatalf("the first run was not refused for its pages: %q\n%s", first, res)
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
	if storedErr != "APIError: "+mockanthropic.MsgPDFPages() {
		t.Fatalf("the refused attempt stored %q, want an APIError with the API's text", storedErr)
	}
	for _, r := range e.Mock.Requests() {
		if isCompactionRequest(&r) {
			t.Fatal("OpenCode compacted after the page-limit error")
		}
	}
	saved := saveData(t, e)

	// Right after a failed resume.
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Try again.")
	if rejected != mockanthropic.MsgPDFPages() {
		t.Fatalf("the resume was not refused for its pages: %q", rejected)
	}
	fs, scan := scanStore(t, e, session)
	pre, stored := withCode(fs, "SF177"), withCode(fs, "SF302")
	if len(pre) != 1 || pre[0].Fix != "replaceMedia" || pre[0].ProviderError != rejected ||
		len(stored) == 0 || stored[0].Fix != "replaceMedia" || stored[0].ErrorType != "pdf_pages" {
		t.Fatalf("scan does not report the PDFs (SF177) and the stored error (SF302, pdf_pages) with replaceMedia\n%s", scan)
	}
	fix := repairPDFs(ctx, t, e, session, 1, "a.pdf (application/pdf, ")

	// Before any resume: the store as the first run left it.
	c := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout})
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	fs0, scan0 := scanStore(t, c, session)
	if pre := withCode(fs0, "SF177"); len(pre) != 1 || pre[0].Fix != "replaceMedia" || pre[0].ProviderError != rejected {
		t.Fatalf("before any resume, scan does not report SF177 with the mock's text\n%s", scan0)
	}
	fix0 := repairPDFs(ctx, t, c, session, 1, "a.pdf (application/pdf, ")
	recordWedged(t, wedgedRow{
		Case: "pdfs-over-page-limit", Test: "TestPDFsOverPageLimit", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "two PDFs of 70 and 40 pages attached to one prompt (`run --file`), 110 pages, over the Messages API's 100; a real run, no edit; " +
			"before any resume is the store as the refused first run left it",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(fs0)), Fix: wroteMutations(fix0.Stdout + fix0.Stderr), After: "accepted"},
	})
}
