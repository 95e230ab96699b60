//go:build acceptance

package opencodetest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRecordedFamilies checks the healthy sessions the recorder keeps for
// each provider family (testdata/real/opencode-1.18.33-<family>/): they
// read, hold a tool loop with signed reasoning or calls and a second
// turn, and real OpenCode resumes them against the family's mock (default
// secret) with every request accepted.
func TestRecordedFamilies(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range []struct {
		name, model string
		signed      func(f *Env, msgs []Message) int // signed parts
		list        func(f *Env) chats
	}{
		{"google", GoogleModel, func(f *Env, msgs []Message) int { return len(geminiSignatures(msgs)) },
			func(f *Env) chats { return geminiChats(f.Gemini) }},
		// OpenCode Zen's Gemini model, sent through the same package.
		{"zen-gemini", ZenGoogleModel, func(f *Env, msgs []Message) int { return len(geminiSignatures(msgs)) },
			func(f *Env) chats { return geminiChats(f.Gemini) }},
		{"amazon-bedrock", BedrockModel, func(f *Env, msgs []Message) int {
			n := 0
			for _, p := range partsOf(msgs, "reasoning") {
				if bedrockSigned(f)(p) {
					n++
				}
			}
			return n
		}, func(f *Env) chats { return bedrockChats(f.Bedrock) }},
	} {
		t.Run(fam.name, func(t *testing.T) {
			t.Parallel()
			src := filepath.Join(root, "testdata", "real", "opencode-"+V1_18+"-"+fam.name)
			ids, err := Sessions(src)
			if err != nil || len(ids) != 2 {
				t.Fatalf("sessions %v %v", ids, err)
			}
			f := NewT(t, Options{Model: fam.model})
			if err := f.LoadData(src); err != nil {
				t.Fatal(err)
			}
			var loop string
			for _, id := range ids {
				msgs, err := LoadSession(src, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(partsOf(msgs, "tool")) > 0 {
					loop = id
					if fam.signed(f, msgs) == 0 {
						t.Errorf("tool loop %s has no signature the mock issued", id)
					}
				}
			}
			if loop == "" {
				t.Fatal("no tool loop recorded")
			}
			// Recorded sessions ran in a project directory that no longer
			// exists; OpenCode needs it to resume (see above).
			var info struct{ Directory string }
			doc, res, err := f.Export(testCtx(t), loop)
			if err != nil {
				t.Fatalf("export: %v\n%s", err, res)
			}
			jsonOf(t, doc, &struct{ Info *struct{ Directory string } }{&info})
			made := info.Directory
			for _, err := os.Stat(filepath.Dir(made)); os.IsNotExist(err); _, err = os.Stat(filepath.Dir(made)) {
				made = filepath.Dir(made)
			}
			if _, err := os.Stat(made); os.IsNotExist(err) {
				if err := os.MkdirAll(info.Directory, 0o755); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(made) })
			}
			f.ProjectDir = info.Directory
			mustResumeAccepted(t, f, fam.list(f), loop, "one more question")
		})
	}
}
