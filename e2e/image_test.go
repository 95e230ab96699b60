//go:build acceptance

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func anthropicCalls(e *opencodetest.Env) []mockCall { return agentCalls(e.Mock.Requests()) }

// TestPastedImageOverFiveMB: a session on OpenCode 1.18.33 holds a pasted
// PNG of 6.2 MB of base64. 1.18.33 itself re-encodes an image attached
// with `opencode run --file` to a JPEG under the limit before it stores it
// (OBSERVED.md), so a real run on it cannot store one that big; stores
// written by other versions or paths hold them. The test therefore pastes
// an image with a real run, then replaces the stored image's data with the
// big PNG: that edit is the one step a real run cannot make. The resume is
// then really rejected by the strict mock with Anthropic's "image exceeds
// 5 MB maximum" text, which OpenCode stores on the failed attempt; scan
// predicts the error (SF170) and maps the stored one (SF302); `sessfix fix
// --yes` with default flags shrinks the image, and the next resume is
// accepted, the image still sent, under 5 MB.
func TestPastedImageOverFiveMB(t *testing.T) {
	acquire(t)
	ctx := testCtx(t, 10*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 4 * time.Minute})
	small, err := base64.StdEncoding.DecodeString(storetest.NoisyPNG(t, 7, 64, 48))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(e.ProjectDir, "shot.png")
	if err := os.WriteFile(shot, small, 0o644); err != nil {
		t.Fatal(err)
	}
	// The prompt goes before --file: every word after --file is read as
	// another file (OBSERVED.md).
	res, err := e.Run(ctx, "run", "--format", "json", "What is in this picture?", "--file", shot)
	if err != nil {
		t.Fatal(err)
	}
	session := res.SessionID
	if session == "" {
		session = onlySession(t, e)
	}
	d := dataDir{t, e.DataDir()}
	big := storetest.NoisyPNG(t, 11, 1300, 1200) // 6.2 MB of base64
	pasted := false
	for _, m := range d.session(session) {
		for _, p := range m.Parts {
			if u, _ := p.Data["url"].(string); p.Type() == "file" && strings.HasPrefix(u, "data:image/") {
				d.setPart(m.ID, p.ID, "url", "data:image/png;base64,"+big, "mime", "image/png")
				pasted = true
			}
		}
	}
	if !pasted {
		t.Fatal("OpenCode stored no image part for the attached file")
	}
	rejected := resumeVerdict(ctx, t, e, anthropicCalls, session, "Look again.")
	if !strings.Contains(rejected, "image exceeds 5 MB maximum: ") {
		t.Fatalf("the mock did not reject the big image: %q", rejected)
	}
	pre, found := imageFindings(t, e, session, "SF170", "image_too_large")
	if !strings.HasSuffix(rejected, strings.TrimPrefix(pre.ProviderError, pre.Index)) {
		t.Errorf("mock rejected with\n  %q\nSF170 predicted\n  %q", rejected, pre.ProviderError)
	}

	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	if fs, res := scanStore(t, e, session); len(fs) > 0 {
		for _, f := range fs {
			if f.Severity != "info" {
				t.Errorf("after fix: %s %s %s\n%s", f.Severity, f.Code, f.Message, res)
			}
		}
	}
	before := len(e.Mock.Requests())
	if rej := resumeVerdict(ctx, t, e, anthropicCalls, session, "And now?"); rej != "" {
		t.Fatalf("after sessfix fix the resume is rejected: %s\n%s", rej, fix)
	}
	// The picture is still sent, shrunk under the limit.
	sent := false
	for _, c := range e.Mock.Requests()[before:] {
		if c.Parsed == nil {
			continue
		}
		for _, m := range c.Parsed.Messages {
			for _, b := range m.Content {
				if b.Type == "image" && b.Source != nil {
					sent = true
					if len(b.Source.Data) > mockanthropic.ImageBase64Max {
						t.Errorf("resume sends %d bytes of base64", len(b.Source.Data))
					}
				}
			}
		}
	}
	if !sent {
		t.Error("the resume does not send the image any more")
	}
	recordWedged(t, wedgedRow{
		Case: "pasted-image-over-5mb", Test: "TestPastedImageOverFiveMB", OpenCode: opencodetest.V1_18, Model: e.Model,
		Break: "a pasted image over Anthropic's 5 MB of base64; 1.18.33 re-encodes what `run --file` attaches, so the test " +
			"pastes a small image with a real run and replaces its stored data with a 6.2 MB PNG (the one edit)",
		Before: rejectedAs(rejected), Scan: codes(codesWithSeverity(found)), Fix: wroteMutations(fix.Stdout + fix.Stderr), After: "accepted",
	})
}

// onlySession is the id of the one session sessfix lists in the data dir.
func onlySession(t *testing.T, e *opencodetest.Env) string {
	t.Helper()
	res := sessfix(t, e, "sessions", "--format", "json", e.DataDir())
	var doc struct {
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || len(doc.Sessions) != 1 {
		t.Fatalf("want one session: %v\n%s", err, res.Stdout)
	}
	return doc.Sessions[0].ID
}

// imageFindings scans the session after a resume rejected for an image over
// a limit: it wants the preflight's finding of the image (code) and the
// stored error (SF302 of errorType), both repaired by shrinkImage, and
// returns the preflight's finding and every finding of the session.
func imageFindings(t *testing.T, e *opencodetest.Env, session, code, errorType string) (*finding, []finding) {
	t.Helper()
	fs, scan := scanStore(t, e, session)
	var pre, stored *finding
	for i := range fs {
		switch fs[i].Code {
		case code:
			pre = &fs[i]
		case "SF302":
			stored = &fs[i]
		}
	}
	if pre == nil || pre.Fix != "shrinkImage" || stored == nil || stored.Fix != "shrinkImage" || stored.ErrorType != errorType {
		t.Fatalf("scan does not report the image (%s) and the stored error (SF302, %s) with shrinkImage\n%s", code, errorType, scan)
	}
	return pre, fs
}
