//go:build acceptance

package opencodetest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockbedrock"
	"github.com/sessfix/sessfix/internal/opencodetest/mockgemini"
)

// The experiments of gemini_test.go and bedrock_test.go: each breaks a
// healthy session the way users report, resumes it with real OpenCode
// 1.18.33, records whether the mock rejects the resume and with what text,
// what OpenCode stores for the failed attempt, and which storage edit makes
// the next resume accepted. OBSERVED.md holds the results.

// outcome is one chat request a mock answered.
type outcome struct {
	Accepted bool
	Error    string
	Body     []byte
}

// chats lists the chat requests a family's mock has answered.
type chats func() []outcome

func geminiChats(m *mockgemini.Server) chats {
	return func() []outcome {
		var out []outcome
		for _, r := range m.ChatRequests() {
			out = append(out, outcome{r.Verdict == mockgemini.Accepted, r.Error, r.Body})
		}
		return out
	}
}

func bedrockChats(m *mockbedrock.Server) chats {
	return func() []outcome {
		var out []outcome
		for _, r := range m.ChatRequests() {
			out = append(out, outcome{r.Verdict == mockbedrock.Accepted, r.Error, r.Body})
		}
		return out
	}
}

// resumeOutcome resumes session with prompt (extra flags such as --model
// allowed) and returns the result and the first chat request the resume
// sent. before is how many chat requests the mock had answered already.
func resumeOutcome(t *testing.T, e *Env, list chats, session, prompt string, extra ...string) (*Result, outcome) {
	t.Helper()
	before := len(list())
	res, err := e.Resume(testCtx(t), session, prompt, extra...)
	if err != nil {
		t.Fatal(err)
	}
	all := list()
	if len(all) <= before {
		t.Fatalf("the resume sent no chat request\n%s", res)
	}
	o := all[before]
	t.Logf("resume %q %v: accepted=%v error=%q exit=%d", prompt, extra, o.Accepted, o.Error, res.ExitCode)
	return res, o
}

// mustResumeAccepted resumes and fails unless every chat request of the
// resume was accepted and OpenCode exited 0.
func mustResumeAccepted(t *testing.T, e *Env, list chats, session, prompt string, extra ...string) outcome {
	t.Helper()
	before := len(list())
	res, o := resumeOutcome(t, e, list, session, prompt, extra...)
	for _, c := range list()[before:] {
		if !c.Accepted {
			t.Fatalf("resume rejected: %s\n%s", c.Error, res)
		}
	}
	if res.ExitCode != 0 {
		t.Fatalf("resume exited %d\n%s", res.ExitCode, res)
	}
	return o
}

// mustResumeRejected resumes and fails unless the first chat request is
// rejected with want and OpenCode stores the failed attempt as an APIError
// whose error.data.message is stored. It returns the failed attempt's
// message.
func mustResumeRejected(t *testing.T, e *Env, list chats, session, prompt, want, stored string) Message {
	t.Helper()
	res, o := resumeOutcome(t, e, list, session, prompt)
	if o.Accepted || o.Error != want {
		t.Fatalf("resume verdict accepted=%v %q, want rejected with %q", o.Accepted, o.Error, want)
	}
	if res.ExitCode == 0 {
		t.Errorf("rejected resume exited 0")
	}
	failed, _ := lastAssistant(e.DataDir(), session)
	t.Logf("failed attempt: %s", dump(failed))
	if Get(failed.Data, "error.name") != "APIError" || Get(failed.Data, "error.data.message") != stored {
		t.Errorf("stored error %v, want APIError %q", Get(failed.Data, "error"), stored)
	}
	return failed
}

// session loads a session and fails on error.
func session(t *testing.T, e *Env, id string) []Message {
	t.Helper()
	msgs, err := LoadSession(e.DataDir(), id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// partsOf returns the assistant parts of the given type in a session, in
// order.
func partsOf(msgs []Message, typ string) []Part {
	var out []Part
	for _, m := range msgs {
		if m.Role() != "assistant" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type() == typ {
				out = append(out, p)
			}
		}
	}
	return out
}

// stored reports whether the last assistant message of the only session
// in e has a part of type typ (the condition a kill waits for).
func stored(e *Env, typ string) func() bool {
	return func() bool {
		ids, _ := Sessions(e.DataDir())
		if len(ids) != 1 {
			return false
		}
		m, ok := lastAssistant(e.DataDir(), ids[0])
		return ok && slices.Contains(partTypes(m), typ)
	}
}

// onlySession returns the id of the only session in e.
func onlySession(t *testing.T, e *Env) string {
	t.Helper()
	ids, err := Sessions(e.DataDir())
	if err != nil || len(ids) != 1 {
		t.Fatalf("sessions %v: %v", ids, err)
	}
	return ids[0]
}

// jsonOf decodes a request body.
func jsonOf(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// installedSDKs lists @ai-sdk packages OpenCode installed at run time
// anywhere under the Env's HOME (1.18.33 bundles the google and amazon-bedrock providers: none).
func installedSDKs(t *testing.T, e *Env) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(e.Home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "@ai-sdk" {
			entries, _ := os.ReadDir(p)
			for _, x := range entries {
				out = append(out, filepath.Join(p, x.Name()))
			}
			return filepath.SkipDir
		}
		return nil
	})
	return out
}
