//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
	"github.com/sessfix/sessfix/pkg/opencode"
)

// TestOversizedPDFRecord: SF503 on a part row OpenCode itself wrote. A user
// attaches one PDF of 39 MiB to a prompt on OpenCode 1.18.33 (`opencode run
// PROMPT --file scan.pdf`): OpenCode stores it as base64 in the user
// message's file part, a part row of 52 MiB, over the 50 MiB from which
// SF503 reports a row (users report a single 308 MB part of a base64 PDF;
// what makes OpenCode run out of memory at start is not reproduced: this
// machine's OpenCode loads 52 MiB). The request is over Anthropic's 32 MB,
// so the strict mock refuses it with 413 request_too_large, as the API
// would; 1.18.33 then compacts by itself with its default config, so the
// config sets compaction.auto false, as TestPDFsOverRequestLimit does. A
// real run, no edit.
//
// Both timings, default flags: scan reports SF503 on the part with
// moveOutPayload (and SF175 on the same part, which that repair fixes);
// `fix --yes` moves the PDF out into the backup run, where
// payloads/<part>-scan.pdf holds the PDF byte for byte, and puts a text
// naming it in its place; undo restores the store exactly; after the fix
// made again the resume is accepted, sending no PDF and that text.
func TestOversizedPDFRecord(t *testing.T) {
	parallel(t)
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	cfg := map[string]any{"compaction": map[string]any{"auto": false}}
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 5 * time.Minute, Config: cfg})
	pdf := testpdf.Write(testpdf.Options{Pages: 3, Noise: 39 << 20, Seed: 5})
	if err := os.WriteFile(filepath.Join(e.ProjectDir, "scan.pdf"), pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.Run(ctx, "run", "--format", "json", "Summarise this file.", "--file", filepath.Join(e.ProjectDir, "scan.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	refused := ""
	for _, c := range anthropicCalls(e) {
		if c.rejected {
			refused = c.err
		}
	}
	if refused != mockanthropic.TextRequestTooLarge {
		t.Fatalf("the first run was refused with %q, want %q\n%s", refused, mockanthropic.TextRequestTooLarge, res)
	}
	saved := saveData(t, e)

	// Right after a failed resume.
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "Try again."); rej != refused {
		t.Fatalf("the resume was refused with %q, not as the first run", rej)
	}
	fs, scan := scanStore(t, e, session)
	big := withCode(fs, "SF503")
	if len(big) != 1 || big[0].Fix != "moveOutPayload" || big[0].Severity != "warning" || big[0].PartID == "" ||
		len(withCode(fs, "SF175")) != 1 || withCode(fs, "SF175")[0].PartID != big[0].PartID {
		t.Fatalf("scan does not report the part (SF503, moveOutPayload; SF175 on the same part)\n%s", scan)
	}
	fix := moveOutAndResume(ctx, t, e, session, big[0].PartID, pdf)

	// Before any resume: the store as the first run left it.
	b := opencodetest.NewT(t, opencodetest.Options{Version: e.Version, Model: e.Model, Timeout: e.Timeout, Config: cfg})
	if err := b.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	b.ProjectDir = e.ProjectDir
	fs0, scan0 := scanStore(t, b, session)
	if big := withCode(fs0, "SF503"); len(big) != 1 || big[0].Fix != "moveOutPayload" {
		t.Fatalf("before any resume, scan does not report SF503 with moveOutPayload\n%s", scan0)
	}
	fix0 := moveOutAndResume(ctx, t, b, session, big[0].PartID, pdf)
	recordWedged(t, wedgedRow{
		Case: "oversized-pdf-record", Test: "TestOversizedPDFRecord", OpenCode: e.Version, Model: e.Model,
		Break: "one PDF of 39 MiB attached to a prompt (`run --file`): a part row of 52 MiB, and a request over Anthropic's 32 MB; " +
			"1.18.33 takes the 413 for an overflow and compacts by itself with its default config, so the test sets compaction.auto false; a real run, no edit",
		Before: rejectedAs(refused), Scan: codes(codesWithSeverity(fs)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(fs0)), Fix: wroteMutations(fix0.Stdout + fix0.Stderr), After: "accepted"},
	})
}

// moveOutAndResume runs `fix --yes` with default flags on e's store, checks
// the PDF went into the backup run whole and undo restores the store
// exactly, repairs again, and resumes: the mock must accept a request that
// sends no PDF and the text naming the moved file.
func moveOutAndResume(ctx context.Context, t *testing.T, e *opencodetest.Env, session, partID string, pdf []byte) *sfResult {
	t.Helper()
	d := dataDir{t, e.DataDir()}
	broken := storeState(t, d)
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, "moveOutPayload") {
		t.Fatalf("fix\n%s", fix)
	}
	if storeState(t, d) == broken {
		t.Fatalf("fix changed nothing\n%s", fix)
	}
	var payloads []string
	_ = filepath.WalkDir(e.Home, func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() && filepath.Base(filepath.Dir(p)) == "payloads" && strings.HasPrefix(de.Name(), partID+"-") {
			payloads = append(payloads, p)
		}
		return nil
	})
	if len(payloads) != 1 {
		t.Fatalf("the backup run should hold one payload of part %s, found %q\n%s", partID, payloads, fix)
	}
	if got, err := os.ReadFile(payloads[0]); err != nil || !bytes.Equal(got, pdf) {
		t.Fatalf("%s is not the PDF (%d bytes, want %d): %v", payloads[0], len(got), len(pdf), err)
	}
	if u := sessfix(t, e, "undo", "--last"); u.ExitCode != 0 || storeState(t, d) != broken {
		t.Fatalf("undo did not restore the store exactly\n%s", u)
	}
	if fix = sessfix(t, e, "fix", "--yes", e.DataDir()); fix.ExitCode != 0 {
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
	chats := 0
	for _, call := range e.Mock.Requests()[n:] {
		if call.Parsed == nil || !call.Chat {
			continue
		}
		chats++
		docs, moved := 0, 0
		for _, m := range call.Parsed.Messages {
			for _, b := range m.Content {
				docs += boolInt(b.Type == "document")
				moved += boolInt(b.Type == "text" && strings.HasPrefix(b.Text, opencode.MediaMovedMark+"the file scan.pdf (application/pdf, "))
			}
		}
		if docs != 0 || moved != 1 {
			t.Errorf("the accepted request sends %d documents and %d texts naming the moved PDF; want 0 and 1", docs, moved)
		}
	}
	if chats == 0 {
		t.Fatal("the resume sent no request the mock parsed")
	}
	return fix
}
