//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
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
// `fix --yes` shrinks the image to a quarter of its base64, undo restores
// the store exactly, and the resume is accepted with every request within
// the edge's limit (repairAndResume).
//
// The two versions store the image differently (OBSERVED.md), so they
// take the two paths of the repair: 1.18.33 keeps the read as a JPEG of
// about 2.2 MB, whose quarter fits the 1 MiB edge, and the resume sends
// the shrunk picture (one repair); 1.1.65 keeps the PNG (4.7 MB), whose
// quarter does not, so the shrunk request is refused too, SF180 names
// the image sessfix marked, and the second repair replaces it (two).
func TestRequestRefusedForSizeOpenAI(t *testing.T) {
	parallel(t)
	refusedForSize(t, opencodetest.V1_18, "request-refused-for-size-openai", 1)
}

func TestRequestRefusedForSizeOpenAI11(t *testing.T) {
	parallel(t)
	refusedForSize(t, opencodetest.V1_1, "request-refused-for-size-openai-1.1", 2)
}

func refusedForSize(t *testing.T, version, rowCase string, rounds int) {
	acquire(t)
	ctx := testCtx(t, 15*time.Minute)
	opts := opencodetest.Options{Version: version, Model: opencodetest.OpenAIModel, Timeout: 4 * time.Minute,
		Config: map[string]any{"compaction": map[string]any{"auto": false}}}
	e := opencodetest.NewT(t, opts)
	shot := writeNoisyPNG(t, e.ProjectDir, "shot.png", 7, 1300, 1200)
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
	fix := repairAndResume(ctx, t, e, sid, rounds)

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
	firstFix := repairAndResume(ctx, t, c, sid, rounds)
	recordWedged(t, wedgedRow{
		Case: rowCase, Test: t.Name(), OpenCode: version, Model: e.Model,
		Break: "the read tool on a noisy 1300×1200 PNG: the next request is over the edge's limit (the mock's 1 MiB, " +
			"answered with an HTTP 413 page: OpenAI's edge publishes no limit); compaction.auto false in the config; a real run, no edit",
		Before: rejectedAs(before), Scan: codes(codesWithSeverity(fs)),
		Fix: fix, After: "accepted",
		First: &firstRow{Scan: codes(codesWithSeverity(early)), Fix: firstFix, After: "accepted"},
	})
}

// repairAndResume repairs the session with `fix --yes` and resumes it,
// until the resume is accepted, and returns the mutations each repair
// wrote ("`shrinkImage`", then "`replaceMedia`"). The first repair shrinks
// the image (SF180's shrinkImage); when the edge refuses the shrunk
// request too, scan reports SF180 again on the image sessfix marked, and
// the second repair replaces it (replaceMedia). rounds is how many
// repairs the case needs (the shrunk image is a deterministic encoding of
// a seeded picture, so whether it fits the edge is not chance). Every
// agent request of the accepted resume must be within the edge's limit
// and send what the last repair left: the shrunk image, which the mock
// decodes, smaller than the stored one was; or sessfix's placeholder.
func repairAndResume(ctx context.Context, t *testing.T, e *opencodetest.Env, sid string, rounds int) string {
	t.Helper()
	var wrote []string
	stored := storedImageBase64(t, e, sid)
	for round := 1; ; round++ {
		want := "shrinkImage"
		if round > 1 {
			want = "replaceMedia"
		}
		fix := sessfix(t, e, "fix", "--yes", e.DataDir())
		if fix.ExitCode != 0 || !strings.Contains(fix.Stdout+fix.Stderr, want) {
			t.Fatalf("repair %d: fix --yes does not write %s\n%s", round, want, fix)
		}
		wrote = append(wrote, wroteMutations(fix.Stdout+fix.Stderr))
		if fs, out := sessionFindings(t, e, sid); len(fs) > 0 {
			for _, f := range fs {
				if f.Severity != "info" {
					t.Errorf("after repair %d: %s %s %s\n%s", round, f.Severity, f.Code, f.Message, out)
				}
			}
		}
		n := len(e.OpenAI.Requests())
		rej := resumeVerdict(ctx, t, e, openAICalls, sid, "what does the picture show?")
		after := e.OpenAI.Requests()[n:]
		if rej != "" {
			if round > 1 || !strings.HasPrefix(rej, "413 Request Entity Too Large") {
				t.Fatalf("after repair %d the resume is refused: %s\n%s", round, rej, fix)
			}
			fs, out := sessionFindings(t, e, sid)
			if !hasCode(fs, scan.SF180, "error") {
				t.Fatalf("the shrunk image was refused, and scan does not report SF180 again\n%s", out)
			}
			continue
		}
		if round != rounds {
			t.Errorf("the resume was accepted after %d repairs, want %d", round, rounds)
		}
		kept, placeholder := 0, false
		for _, r := range after {
			if !r.Chat {
				continue
			}
			if len(r.Body) > edgeLimit {
				t.Errorf("a request after the repair is %d bytes, over the edge's %d", len(r.Body), edgeLimit)
			}
			placeholder = placeholder || strings.Contains(string(r.Body), opencode.MediaRemovedMark)
			for _, im := range r.Parsed.Responses.Images() {
				raw, err := base64.StdEncoding.DecodeString(im.Data)
				if err != nil {
					t.Fatalf("an image the resume sends is no base64: %v", err)
				}
				cfg, format, err := image.DecodeConfig(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("an image the resume sends does not decode: %v", err)
				}
				if len(im.Data) >= stored {
					t.Errorf("the resume sends an image of %d bytes of base64, not smaller than the %d stored before the repair", len(im.Data), stored)
				}
				t.Logf("the resume sends a %s of %d×%d px, %d bytes of base64 (stored before the repair: %d)", format, cfg.Width, cfg.Height, len(im.Data), stored)
				kept++
			}
		}
		if round == 1 && (kept == 0 || placeholder) {
			t.Errorf("after the shrink the resume sends %d images and the placeholder %v: want the shrunk image", kept, placeholder)
		}
		if round > 1 && (kept != 0 || !placeholder) {
			t.Errorf("after the replacement the resume sends %d images and the placeholder %v: want the placeholder only", kept, placeholder)
		}
		return strings.Join(wrote, ", then ")
	}
}

// storedImageBase64 is the base64 length of the image the session's read
// tool stored.
func storedImageBase64(t *testing.T, e *opencodetest.Env, sid string) int {
	t.Helper()
	for _, m := range (dataDir{t, e.DataDir()}).session(sid) {
		for _, p := range m.Parts {
			raw, err := json.Marshal(p.Data)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range gjson.GetBytes(raw, "state.attachments").Array() {
				if data, ok := opencode.Base64Data(a.Get("url").String()); ok {
					return len(data)
				}
			}
		}
	}
	t.Fatal("the session stores no image")
	return 0
}
