//go:build acceptance

package e2e

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// edgeLimit is the request body size the mock's edge lets through in
// TestRequestRefusedForSizeOpenAI: above the turn's first request, below
// the next one, which carries the read image (a noisy 1300×1200 PNG that
// 1.18.33 sends as a JPEG of about 2.2 MB, OBSERVED.md).
const edgeLimit = 1 << 20

// TestRequestRefusedForSizeOpenAI: SF180 on real OpenCode 1.18.33 with the
// openai provider (the Responses API), anomalyco/opencode#12060's shape;
// TestRequestRefusedForSizeOpenAI11 the same on 1.1.65 (JSON storage).
// The model reads one large PNG; the next request, which carries it, is
// over the edge's limit and answered with an HTTP 413 page (the mock's
// MaxRequestBytes: OpenAI's edge publishes no limit), and every resume
// again. No preflight can predict it. A real run, no edit;
// `compaction.auto: false` as in the other size cases. Both timings after
// the failure, default flags: scan reports SF180 on the read's result,
// `fix --yes` replaces the image by sessfix's placeholder, undo restores
// the store exactly, and the resume is accepted with every request within
// the edge's limit and the placeholder sent in the image's place.
func TestRequestRefusedForSizeOpenAI(t *testing.T) {
	refusedForSize(t, opencodetest.V1_18, "request-refused-for-size-openai")
}

func TestRequestRefusedForSizeOpenAI11(t *testing.T) {
	refusedForSize(t, opencodetest.V1_1, "request-refused-for-size-openai-1.1")
}

func refusedForSize(t *testing.T, version, rowCase string) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	opts := opencodetest.Options{Version: version, Model: opencodetest.OpenAIModel, Timeout: 4 * time.Minute,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	raw, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 7, 1300, 1200))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(e.ProjectDir, "shot.png")
	if err := os.WriteFile(shot, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e.OpenAI.SetMaxRequestBytes(edgeLimit)
	script := &openAIReadFilesScript{paths: []string{shot}}
	e.OpenAI.SetScript(script.answer)
	first, err := e.Prompt(ctx, "please look at the picture "+markerReadFiles)
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	refused := ""
	for _, r := range e.OpenAI.AgentRequests() {
		t.Logf("agent request: %d bytes; %v %s", len(r.Body), r.Verdict, r.Error)
		if r.Error != "" && refused == "" {
			refused = r.Error
		}
	}
	if !strings.HasPrefix(refused, "413 Request Entity Too Large") {
		t.Fatalf("the turn's request with the read image: refused with %q, want the edge's 413", refused)
	}
	msgs := (dataDir{t, e.DataDir()}).session(sid)
	if len(msgs) == 0 {
		t.Fatal("the session stores no message")
	}
	stored := msgs[len(msgs)-1].Data["error"]
	t.Logf("stored on the failed turn: %v", stored)
	saved := saveData(t, e)

	before := resumeVerdict(ctx, t, e, openAICalls, sid, "go on")
	if !strings.HasPrefix(before, "413 Request Entity Too Large") {
		t.Fatalf("the resume of the session: %q, want the edge's 413", before)
	}
	fs, out := sessionFindings(t, e, sid)
	if !hasCode(fs, scan.SF180, "error") || out.ExitCode != 1 {
		t.Fatalf("after the refused resume, scan does not report SF180\n%s", out)
	}
	for _, f := range fs {
		if f.Severity == "error" && !f.Fixable {
			t.Fatalf("an error sessfix cannot repair: %+v\n%s", f, out)
		}
	}
	fix := replaceAndResume(ctx, t, e, sid)

	// The other timing: right after the failed turn, on a copy of the
	// store as the turn left it, in a fresh OpenCode home.
	c := opencodetest.NewT(t, opts)
	if err := c.LoadData(saved); err != nil {
		t.Fatal(err)
	}
	c.ProjectDir = e.ProjectDir
	c.OpenAI.SetMaxRequestBytes(edgeLimit)
	early, out := sessionFindings(t, c, sid)
	if !hasCode(early, scan.SF180, "error") {
		t.Fatalf("right after the failed turn, scan does not report SF180\n%s", out)
	}
	fixUndone(t, c, "right after the failed turn")
	firstFix := replaceAndResume(ctx, t, c, sid)
	recordWedged(t, wedgedRow{
		Case: rowCase, Test: t.Name(), OpenCode: version, Model: e.Model,
		Break: "the read tool on a noisy 1300×1200 PNG: the next request is over the edge's limit (the mock's 1 MiB, " +
			"answered with an HTTP 413 page: OpenAI's edge publishes no limit); compaction.auto false in the config; a real run, no edit",
		Before: rejectedAs(before), Scan: codes(codesWithSeverity(fs)),
		Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(early)), Fix: wroteMutations(firstFix.Stdout + firstFix.Stderr), After: "accepted"},
	})
}

// replaceAndResume repairs the session and resumes it
// (fixAndResumeOpenAI, replaceMedia): every agent request of the resume
// must be within the edge's limit, and one must send sessfix's
// placeholder in the image's place. It returns fix's result.
func replaceAndResume(ctx context.Context, t *testing.T, e *opencodetest.Env, sid string) *sfResult {
	t.Helper()
	fix, after := fixAndResumeOpenAI(ctx, t, e, sid, "replaceMedia", "what does the picture show?")
	placeholder := false
	for _, r := range after {
		if !r.Chat {
			continue
		}
		if len(r.Body) > edgeLimit {
			t.Errorf("a request after the fix is %d bytes, over the edge's %d", len(r.Body), edgeLimit)
		}
		placeholder = placeholder || strings.Contains(string(r.Body), opencode.MediaRemovedMark)
	}
	if !placeholder {
		t.Errorf("no request after the fix sends sessfix's placeholder for the image")
	}
	return fix
}
