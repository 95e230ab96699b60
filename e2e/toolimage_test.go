//go:build acceptance

package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// markerReadBig makes the mock call the read tool on the test's image.
const markerReadBig = "[[read-big]]"

// readScript answers the first agent request whose prompt carries
// markerReadBig with thinking and a read call of path; every other request
// as DefaultScript does.
func readScript(path string) mockanthropic.Script {
	return func(r *mockanthropic.Request) mockanthropic.Turn {
		req := r.Parsed
		if len(req.Tools) == 0 || len(req.PendingToolResults()) > 0 || !strings.Contains(req.LastUserText(), markerReadBig) {
			return mockanthropic.DefaultScript(r)
		}
		return mockanthropic.Turn{Blocks: []mockanthropic.BlockSpec{
			{Type: "thinking", Text: "I will read the picture."},
			{Type: "tool_use", ToolName: "read", ToolInput: map[string]any{"filePath": path}},
		}}
	}
}

// TestToolImageOverFiveMB: OpenCode 1.1.65's read tool keeps an image whole
// (OBSERVED.md): reading a 4.7 MB PNG stores 6.2 MB of base64 in the tool
// part's attachments and sends it inside the tool result, which the strict
// mock rejects with the API's text for an image in a tool result. A real
// run, no edit: the session is bricked, every resume sends the image again.
// scan predicts the error (SF170 on the tool part) and maps the stored one
// (SF302); `sessfix fix --yes`, default flags, right after the failure,
// shrinks the attachment, and the next resume is accepted with the image
// still sent in the tool result, under 5 MB.
func TestToolImageOverFiveMB(t *testing.T) {
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_1, Timeout: 4 * time.Minute})
	png, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 11, 1300, 1200))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.ProjectDir, "big.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	e.Mock.SetScript(readScript(path))
	res, err := e.Prompt(ctx, "What is in big.png? "+markerReadBig)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	first := ""
	for _, c := range anthropicCalls(e) {
		if c.rejected && first == "" {
			first = c.err
		}
	}
	const limitText = ".tool_result.content.1.image.source.base64: image exceeds 5 MB maximum: "
	if !strings.Contains(first, limitText) {
		t.Fatalf("the request after the read was not rejected for the image: %q\n%s", first, res)
	}
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Look again.")
	if !strings.Contains(rejected, limitText) {
		t.Fatalf("the resume was not rejected for the image: %q", rejected)
	}
	pre, found := imageFindings(t, e, session)
	if rejected != pre.ProviderError {
		t.Errorf("mock rejected with\n  %q\nSF170 predicted\n  %q", rejected, pre.ProviderError)
	}
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	before := len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	// The picture is still sent in the tool result, shrunk under the limit.
	sent := 0
	for _, c := range e.Mock.Requests()[before:] {
		if c.Parsed == nil {
			continue
		}
		for _, m := range c.Parsed.Messages {
			for _, b := range m.Content {
				if b.Type == "tool_result" && strings.Contains(string(b.Content), `"type":"image"`) {
					sent = max(sent, len(b.Content))
				}
			}
		}
	}
	if sent == 0 || sent > mockanthropic.ImageBase64Max {
		t.Errorf("the resume's tool result holds %d bytes with an image, want an image under 5 MB", sent)
	}
	recordWedged(t, wedgedRow{
		Case: "read-tool-image-over-5mb", Test: "TestToolImageOverFiveMB", OpenCode: opencodetest.V1_1, Model: e.Model,
		Break:  "the read tool on a 4.7 MB PNG: 1.1.65 keeps it whole (6.2 MB of base64) in the tool result; a real run, no edit",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}
