package cmd

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestNoCauseNoteCommandsRun: the commands SF302's note names for an
// error sessfix traces to nothing (here Gemini's "Unable to process input
// image. Please retry…" after one refusal) name the session and its store,
// and run as printed once the user puts a part id for PART: `show --sent`
// lists the request, `drop --part` plans the cut (no terminal to ask on).
// The store's path has a space in it.
func TestNoCauseNoteCommandsRun(t *testing.T) {
	exe := sessfixExe(t)
	dir := t.TempDir()
	fx := storetest.ImageSession(storetest.Image{Mime: "image/png", Filename: "dot.png", Base64: storetest.NoisyPNG(t, 1, 16, 16)})
	gemini := strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"google"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"gemini-2.5-pro"`)
	for i := range fx.Messages {
		fx.Messages[i].Body = []byte(gemini.Replace(string(fx.Messages[i].Body)))
	}
	fx.Messages[1].Body = []byte(strings.Replace(string(fx.Messages[1].Body), `"time":{`,
		`"error":{"name":"APIError","data":{"message":"Unable to process input image. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","statusCode":400,"isRetryable":false}},"time":{`, 1))
	fx.Messages[1].Parts = nil
	path := storetest.Materialize(t, store.ShapeSQLite, filepath.Join(dir, "two words"), fx)
	env := []string{"HOME=" + dir, "XDG_DATA_HOME=" + filepath.Join(dir, "elsewhere"), "SESSFIX_STATE_DIR=" + filepath.Join(dir, "state")}

	scan := exec.Command(exe, "scan", path)
	scan.Env = append(scan.Environ(), append(env, "NO_COLOR=1")...)
	out, _ := scan.Output()
	var note string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, " SF302 ") {
			note = line
		}
	}
	cmds := regexp.MustCompile("`(sessfix (?:show|drop) [^`]*)`").FindAllStringSubmatch(note, -1)
	if len(cmds) != 2 {
		t.Fatalf("SF302 names %d show/drop commands, want 2:\n%s", len(cmds), out)
	}
	for _, m := range cmds {
		line := strings.ReplaceAll(m[1], "PART", storetest.ImagePartID(1))
		code, stderr := sh(t, exe, dir, env, line)
		if strings.HasPrefix(line, "sessfix show") && code != 0 || strings.HasPrefix(line, "sessfix drop") && (code != 1 || !strings.Contains(stderr, "no terminal to ask on")) {
			t.Errorf("`%s` (from `%s`) exits %d:\n%s", line, m[1], code, stderr)
		}
	}
}
