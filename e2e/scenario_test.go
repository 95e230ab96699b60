//go:build acceptance

package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/sent"
)

// killSpec is a real SIGKILL of `opencode run` at a moment of a turn: the
// mock holds its stream at stage, the test waits until OpenCode has stored
// what ready looks for, then kills OpenCode's process group.
type killSpec struct {
	stage  mockanthropic.Stage
	prompt string
	ready  func(version string, m opencodetest.Message) bool
}

// scenario is one way a session breaks.
type scenario struct {
	name string
	// what is the shape, for docs/compatibility.md.
	what     string
	versions []string
	// cut picks the base session killed after its tool result instead of
	// the complete tool loop.
	cut  bool
	kill *killSpec
	// corrupt edits the stored session (after the kill, if any).
	corrupt func(c *caseRun)
	// healthy: nothing is broken; sessfix must report nothing.
	healthy bool
	// undetectable: no offline check can see the defect; only the
	// provider's stored error reveals it (error-driven recovery).
	undetectable bool
	// serveBefore also asks `opencode serve` for the session before the
	// fix (for shapes that break loading rather than the request).
	serveBefore bool
	// note explains, in docs/compatibility.md, what no storage repair can
	// do and what the user can do instead.
	note string
}

func hasPartType(typ string) func(string, opencodetest.Message) bool {
	return func(_ string, m opencodetest.Message) bool { return firstPart(m, typ) != nil }
}

var scenarios = []scenario{
	{
		name: "healthy", what: "a recorded tool loop and a second turn, untouched",
		versions: versions, healthy: true,
	},
	{
		name: "whitespace-text", what: "the first turn's answer text is whitespace only",
		versions: versions,
		corrupt: func(c *caseRun) {
			m := c.assistant(1)
			c.d.setPart(m.ID, c.part(m, "text").ID, "text", " \n\t ")
		},
	},
	{
		name: "reasoning-after-tool", what: "the tool call step's reasoning part re-keyed to sort after its tool part",
		versions: versions,
		corrupt: func(c *caseRun) {
			m := c.assistant(0)
			r, tool := c.part(m, "reasoning"), c.part(m, "tool")
			next := ""
			for i, p := range m.Parts {
				if p.ID == tool.ID && i+1 < len(m.Parts) {
					next = m.Parts[i+1].ID
				}
			}
			c.d.rekeyPart(m.ID, r.ID, idAfter(c.t, tool.ID, next))
		},
	},
	{
		name: "unsigned-final-tool-loop", what: "the final tool-loop message (turn killed after the tool result) lost its reasoning signature",
		versions: versions, cut: true,
		corrupt: func(c *caseRun) {
			m := c.assistant(0)
			c.d.deletePaths(m.ID, c.part(m, "reasoning").ID, "metadata.anthropic.signature")
		},
	},
	{
		name: "corrupted-signature", what: "one character of the tool call step's reasoning signature changed",
		versions: versions, undetectable: true,
		corrupt: func(c *caseRun) {
			m := c.assistant(0)
			p := c.part(m, "reasoning")
			sig, _ := opencodetest.Get(p.Data, "metadata.anthropic.signature").(string)
			if len(sig) < 20 {
				c.t.Fatalf("reasoning %s has no signature to corrupt: %v", p.ID, p.Data)
			}
			b := []byte(sig)
			if b[12] == 'A' {
				b[12] = 'B'
			} else {
				b[12] = 'A'
			}
			c.d.setPart(m.ID, p.ID, "metadata.anthropic.signature", string(b))
		},
		note: "a signature cannot be checked offline; sessfix repairs it from the error OpenCode stored " +
			"(strip that message's reasoning, exclude the message when it is the final tool-loop message)",
	},
	{
		name: "thinking-only", what: "the first turn's answer lost its text part (reasoning only)",
		versions: versions,
		corrupt: func(c *caseRun) {
			m := c.assistant(1)
			c.d.deletePart(m.ID, c.part(m, "text").ID)
		},
	},
	{
		name: "tool-running", what: "the bash tool part left in `running` (no output, no end time)",
		versions: versions,
		corrupt: func(c *caseRun) {
			m := c.assistant(0)
			p := c.part(m, "tool")
			c.d.setPart(m.ID, p.ID, "state.status", "running")
			c.d.deletePaths(m.ID, p.ID, "state.output", "state.time.end", "state.time.compacted")
		},
	},
	{
		name: "zero-byte-part", what: "the last answer's text part file is 0 bytes",
		versions: []string{opencodetest.V1_1}, serveBefore: true,
		corrupt: func(c *caseRun) {
			m := c.assistant(-1)
			c.d.overwritePartFile(m.ID, c.part(m, "text").ID, nil)
		},
	},
	{
		name: "nul-filled-part", what: "the last answer's step-finish part file is NUL bytes of its old length",
		versions: []string{opencodetest.V1_1}, serveBefore: true,
		corrupt: func(c *caseRun) {
			m := c.assistant(-1)
			p := c.part(m, "step-finish")
			n := len(c.d.rawPart(m.ID, p.ID))
			c.d.overwritePartFile(m.ID, p.ID, make([]byte, n))
		},
	},
	{
		name: "part-id-without-prefix", what: "the first prompt's text part id lost its `prt_` prefix",
		versions: versions, serveBefore: true,
		corrupt: func(c *caseRun) {
			m := c.user(0)
			p := c.part(m, "text")
			c.d.rekeyPart(m.ID, p.ID, strings.TrimPrefix(p.ID, "prt_"))
		},
	},
	{
		name: "kill-mid-thinking", what: "SIGKILL while the reasoning streams (a new turn)",
		versions: versions,
		kill:     &killSpec{stage: mockanthropic.StageThinkingDelta, prompt: "Tell me more about it.", ready: hasPartType("reasoning")},
	},
	{
		name: "kill-text-start", what: "SIGKILL when the text block has started, before any text",
		versions: versions,
		kill: &killSpec{stage: mockanthropic.StageTextStart, prompt: "Tell me more about it.",
			ready: func(v string, m opencodetest.Message) bool {
				if v == opencodetest.V1_18 {
					return firstPart(m, "text") != nil
				}
				// 1.1 stores no text part before the first delta: wait
				// for the finished, signed reasoning.
				r := firstPart(m, "reasoning")
				return r != nil && opencodetest.Get(r.Data, "metadata.anthropic.signature") != nil
			}},
	},
	{
		name: "kill-mid-text", what: "SIGKILL after the first text delta",
		versions: versions,
		kill: &killSpec{stage: mockanthropic.StageTextDelta, prompt: "Tell me more about it.",
			ready: func(v string, m opencodetest.Message) bool {
				p := firstPart(m, "text")
				// 1.18 writes text when the block ends; 1.1 writes it as it streams.
				return p != nil && (v == opencodetest.V1_18 || p.Text() != "")
			}},
	},
	{
		name: "kill-tool-running", what: "SIGKILL while the bash tool runs (tool_use sent, no result)",
		versions: versions,
		kill: &killSpec{stage: mockanthropic.StageToolUse, prompt: "Wait for me [[tool:bash sleep 60]]",
			ready: func(_ string, m opencodetest.Message) bool {
				p := firstPart(m, "tool")
				return p != nil && opencodetest.Get(p.Data, "state.status") == "running"
			}},
	},
	{
		name: "kill-after-tool-result", what: "SIGKILL after the tool result was stored, before the model answered it",
		versions: versions, cut: true,
	},
}

func firstPart(m opencodetest.Message, typ string) *opencodetest.Part {
	for i := range m.Parts {
		if m.Parts[i].Type() == typ {
			return &m.Parts[i]
		}
	}
	return nil
}

// caseRun is one scenario on one OpenCode version.
type caseRun struct {
	t       *testing.T
	version string
	e       *opencodetest.Env
	d       dataDir
	session string
	msgs    []opencodetest.Message // as stored before the corruption
}

func (c *caseRun) byRole(role string, n int) opencodetest.Message {
	c.t.Helper()
	var list []opencodetest.Message
	for _, m := range c.msgs {
		if m.Role() == role {
			list = append(list, m)
		}
	}
	if n < 0 {
		n += len(list)
	}
	if n < 0 || n >= len(list) {
		c.t.Fatalf("session %s has %d %s messages, want #%d", c.session, len(list), role, n)
	}
	return list[n]
}

// assistant returns the n-th assistant message (negative: from the end).
func (c *caseRun) assistant(n int) opencodetest.Message { return c.byRole("assistant", n) }

// user returns the n-th user message (negative: from the end).
func (c *caseRun) user(n int) opencodetest.Message { return c.byRole("user", n) }

// part returns the message's first part of a type.
func (c *caseRun) part(m opencodetest.Message, typ string) opencodetest.Part {
	c.t.Helper()
	p := firstPart(m, typ)
	if p == nil {
		c.t.Fatalf("message %s has no %s part", m.ID, typ)
	}
	return *p
}

// verdict is what happened when OpenCode resumed the session.
type verdict struct {
	State string // accepted, rejected, failed (no request reached the mock)
	Error string // the mock's error, or OpenCode's own error line
	Exit  int
	// Serve is the status of GET /session/:id/message (0: not asked).
	Serve int
}

func (v verdict) String() string {
	s := v.State
	if v.Error != "" {
		// A double-backtick code span: the texts hold backticks.
		s += ": `` " + v.Error + " ``"
	}
	if v.Serve != 0 {
		s += fmt.Sprintf("; GET /session/:id/message %d", v.Serve)
	}
	return s
}

// outcome is one row of docs/compatibility.md.
type outcome struct {
	Scenario, What, Version string
	Before                  verdict
	Codes                   []string // sessfix scan before the resume
	Predicted               string   // yes, no, or why not applicable
	Recovery                string   // SF302 after the failed resume: its error type
	FixExit                 int
	Left                    []string // codes sessfix scan still reports after the fix
	After                   verdict
	Note                    string
}

var (
	ansiRe   = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
	docsTail = regexp.MustCompile(`\s*(Please consult our documentation at )?https?://\S+\s*$`)
)

// trimDocsTail drops a trailing documentation link, the one difference
// allowed between a predicted and an actual error text.
func trimDocsTail(s string) string {
	return strings.TrimSpace(docsTail.ReplaceAllString(strings.TrimSpace(s), ""))
}

// opencodeError picks OpenCode's error line from its output when it failed
// before sending anything.
func (c *caseRun) opencodeError(res *opencodetest.Result) string {
	out := ansiRe.ReplaceAllString(res.Stderr+"\n"+res.Stdout, "")
	out = strings.ReplaceAll(out, c.e.Root, "$TMP")
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.Contains(line, "Error") || strings.Contains(line, "error") {
			if len(line) > 160 {
				line = line[:160] + "…"
			}
			return line
		}
	}
	return fmt.Sprintf("exit %d", res.ExitCode)
}

// resume runs `opencode run --session ID PROMPT` and says what the mock did.
func (c *caseRun) resume(prompt string) verdict {
	c.t.Helper()
	c.e.Mock.Reset()
	res, err := c.e.Resume(testCtx(c.t, 4*time.Minute), c.session, prompt)
	if err != nil {
		c.t.Fatalf("resume: %v", err)
	}
	v := verdict{Exit: res.ExitCode}
	chat := c.e.Mock.ChatRequests()
	for _, r := range chat {
		if r.Verdict == mockanthropic.Rejected {
			v.State, v.Error = "rejected", r.Error
			return v
		}
	}
	if len(chat) == 0 || res.ExitCode != 0 {
		v.State, v.Error = "failed", c.opencodeError(res)
		c.t.Logf("opencode failed:\n%s", res)
		return v
	}
	v.State = "accepted"
	return v
}

// serve asks `opencode serve` for the session's messages.
func (c *caseRun) serve() (int, []byte) {
	c.t.Helper()
	ctx := testCtx(c.t, 2*time.Minute)
	s, err := c.e.Serve(ctx)
	if err != nil {
		c.t.Fatalf("opencode serve: %v", err)
	}
	defer s.Kill()
	status, body, err := s.SessionMessages(ctx, c.session)
	if err != nil {
		c.t.Fatalf("GET /session/%s/message: %v", c.session, err)
	}
	return status, body
}

// userTexts lists the texts the user wrote in a session.
func userTexts(msgs []opencodetest.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role() != "user" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type() == "text" && opencodetest.Get(p.Data, "synthetic") != true && strings.TrimSpace(p.Text()) != "" {
				out = append(out, p.Text())
			}
		}
	}
	return out
}

type exportDoc struct {
	Messages []struct {
		Info struct {
			Role string `json:"role"`
		} `json:"info"`
		Parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"messages"`
}

func sortedCodes(fs []finding) []string {
	var out []string
	for _, f := range fs {
		if !slices.Contains(out, f.Code) {
			out = append(out, f.Code)
		}
	}
	slices.Sort(out)
	return out
}

// codesWithSeverity is sortedCodes with the severity of findings below
// error named ("SF302 (info)"): after a fix, what is left is usually
// history (the failed attempt OpenCode stored), not damage.
func codesWithSeverity(fs []finding) []string {
	rank := map[string]int{"info": 1, "warning": 2, "error": 3}
	worst := map[string]string{}
	for _, f := range fs {
		if rank[f.Severity] > rank[worst[f.Code]] {
			worst[f.Code] = f.Severity
		}
	}
	var out []string
	for _, code := range sortedCodes(fs) {
		if sev := worst[code]; sev != "error" {
			code += " (" + sev + ")"
		}
		out = append(out, code)
	}
	return out
}

// runScenario runs one scenario on one version and returns its row.
func runScenario(t *testing.T, sc *scenario, version string) outcome {
	b, c := onBase(t, version)
	e := c.e
	if sc.cut {
		c.session = b.cut
	}
	row := outcome{Scenario: sc.name, What: sc.what, Version: version, Note: sc.note}

	if sc.kill != nil {
		c.killTurn(sc.kill)
	}
	c.msgs = c.d.session(c.session)
	texts := userTexts(c.msgs)
	if sc.corrupt != nil {
		sc.corrupt(c)
	}

	// 1. What sessfix sees before OpenCode touches the broken session.
	before, scanRes := scanStore(t, e, c.session)
	row.Codes = codesWithSeverity(before)
	t.Logf("scan before the resume: %v", row.Codes)
	switch {
	case sc.healthy && len(before) > 0:
		t.Errorf("sessfix reports a healthy real session:\n%s", scanRes.Stdout)
	case !sc.healthy && !sc.undetectable && len(before) == 0:
		t.Errorf("sessfix scan reports nothing for %s", sc.what)
	}

	// What `sessfix show --sent` says OpenCode will send (checked against
	// the provider's index below).
	shown := showSent(t, e, c.session)

	// 2. What OpenCode and the provider make of it.
	if sc.serveBefore {
		row.Before.Serve, _ = c.serve()
	}
	v := c.resume("continue")
	v.Serve = row.Before.Serve
	row.Before = v
	t.Logf("resume before the fix: %s", row.Before)
	if sc.healthy && v.State != "accepted" {
		t.Errorf("a healthy session did not resume: %s", v)
	}
	// Severity error means the provider rejects the history or OpenCode
	// cannot load the session: on a session both took as it is, it is a
	// false alarm (warnings are for damage that bites later).
	if v.State == "accepted" && (v.Serve == 0 || v.Serve == 200) {
		for _, f := range before {
			if f.Severity == "error" {
				t.Errorf("the resume was accepted, yet sessfix reports %s (error) at %s/%s: %s", f.Code, f.MessageID, f.PartID, f.Message)
			}
		}
	}

	// 3. Did the preflight predict the provider's exact error?
	switch {
	case v.State != "rejected":
		row.Predicted = "n/a"
	case sc.undetectable:
		row.Predicted = "not possible offline"
	default:
		row.Predicted = "no"
		want := trimDocsTail(v.Error)
		var got []string
		for _, f := range before {
			if !isPreflight(f.Code) {
				continue
			}
			got = append(got, f.Code+": "+f.ProviderError)
			if trimDocsTail(f.ProviderError) == want {
				row.Predicted = "yes"
			}
		}
		if row.Predicted != "yes" {
			t.Errorf("no preflight finding (SF150–SF169) predicts the provider's error\nmock:      %q\npreflight: %q\nall codes: %v",
				v.Error, got, row.Codes)
		}
	}

	// 3b. `sessfix show --sent` prints the index the provider named, mapped
	// to the stored record the preflight's finding names.
	if v.State == "rejected" {
		checkSentIndex(t, shown, v.Error, before)
	}

	// 4. The failed attempt OpenCode stored is what error-driven recovery reads.
	if v.State == "rejected" {
		after, _ := scanStore(t, e, c.session)
		row.Recovery = "none"
		for _, f := range after {
			if f.Code == "SF302" {
				row.Recovery = f.ErrorType
				if f.ProviderError != v.Error {
					t.Errorf("SF302 carries %q, the mock answered %q", f.ProviderError, v.Error)
				}
			}
		}
		if row.Recovery == "none" {
			t.Errorf("sessfix scan does not report the failed attempt (SF302) OpenCode stored")
		}
	}

	// 5. Repair with no other hint and the default settings, right after
	// the failed attempt (or the kill) as a user would.
	fix := sessfix(t, e, "fix", "--yes", e.DataDir())
	row.FixExit = fix.ExitCode
	t.Logf("%s", fix)
	if fix.ExitCode != 0 {
		t.Errorf("sessfix fix exited %d (0 means everything planned was fixed)\n%s", fix.ExitCode, fix)
	}
	left, _ := scanStore(t, e, c.session)
	row.Left = codesWithSeverity(left)
	t.Logf("scan after the fix: %v", row.Left)
	for _, f := range left {
		if f.Severity == "error" {
			t.Errorf("after the fix sessfix still reports %s (%s) at %s/%s: %s", f.Code, f.Severity, f.MessageID, f.PartID, f.Message)
		}
	}

	// 6. OpenCode must take the session again and still load all of it.
	row.After = c.resume("continue")
	t.Logf("resume after the fix: %s", row.After)
	if row.After.State != "accepted" {
		t.Errorf("after sessfix fix the session still does not resume: %s", row.After)
	}
	doc, res, err := e.Export(testCtx(t, 2*time.Minute), c.session)
	if err != nil {
		t.Errorf("opencode export after the fix: %v\n%s", err, res)
	} else {
		var ex exportDoc
		if err := json.Unmarshal(doc, &ex); err != nil {
			t.Errorf("export document: %v", err)
		}
		var have []string
		for _, m := range ex.Messages {
			if m.Info.Role == "user" {
				for _, p := range m.Parts {
					have = append(have, p.Text)
				}
			}
		}
		for _, want := range texts {
			if !slices.Contains(have, want) {
				t.Errorf("user text %q is gone after the fix", want)
			}
		}
	}
	status, body := c.serve()
	row.After.Serve = status
	if status != 200 {
		t.Errorf("GET /session/%s/message after the fix: %d %s", c.session, status, body)
	} else {
		var list []json.RawMessage
		if err := json.Unmarshal(body, &list); err != nil || len(list) < len(c.msgs) {
			t.Errorf("GET /session/%s/message returned %d messages (%v), the store had %d", c.session, len(list), err, len(c.msgs))
		}
	}
	return row
}

// killTurn resumes the session with a new prompt and SIGKILLs OpenCode at
// the kill's stage, once ready holds for the turn's newest assistant message.
func (c *caseRun) killTurn(k *killSpec) {
	t := c.t
	t.Helper()
	ctx := testCtx(t, 90*time.Second)
	known := map[string]bool{}
	for _, m := range c.d.session(c.session) {
		known[m.ID] = true
	}
	pause := c.e.Mock.Pause(k.stage, mockanthropic.ChatRequest)
	defer pause.Release()
	proc, err := c.e.StartPrompt(c.session, k.prompt)
	if err != nil {
		t.Fatal(err)
	}
	err = proc.KillAt(ctx, pause, func() bool {
		msgs, err := opencodetest.LoadSession(c.e.DataDir(), c.session)
		if err != nil {
			return false
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if !known[msgs[i].ID] && msgs[i].Role() == "assistant" {
				return k.ready(c.version, msgs[i])
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("kill at %s: %v", k.stage, err)
	}
	for _, m := range c.d.session(c.session) {
		if !known[m.ID] {
			b, _ := json.Marshal(m.Data)
			t.Logf("left by the kill: %s %s", m.ID, b)
			for _, p := range m.Parts {
				b, _ := json.Marshal(p.Data)
				t.Logf("  %s %s", p.ID, b)
			}
		}
	}
}

// sentDoc is the part of `sessfix show --format json` (docs/json-output.md)
// the suite reads: the request OpenCode would send.
type sentDoc struct {
	Request struct {
		Messages []struct {
			Index   string   `json:"index"`
			Role    string   `json:"role"`
			Sources []string `json:"sources"`
			Blocks  []struct {
				Index     string `json:"index"`
				Type      string `json:"type"`
				MessageID string `json:"message_id"`
				PartID    string `json:"part_id"`
			} `json:"blocks"`
		} `json:"messages"`
	} `json:"request"`
}

// showSent runs `sessfix show --format json` on the session.
func showSent(t *testing.T, e *opencodetest.Env, session string) *sentDoc {
	t.Helper()
	return showSentIn(t, e, e.DataDir(), session)
}

// showSentIn is showSent on any store path (an export file).
func showSentIn(t *testing.T, e *opencodetest.Env, path, session string) *sentDoc {
	t.Helper()
	res := sessfix(t, e, "show", "--format", "json", session, "--store", path)
	if res.ExitCode != 0 {
		t.Fatalf("show:\n%s", res)
	}
	var doc sentDoc
	if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
		t.Fatalf("show printed no JSON document: %v\n%s", err, res)
	}
	return &doc
}

// providerIndex is the index the provider's error names as show --sent
// prints it: the provider's own form (sent.ParseIndex reads them all), with
// Gemini's 1-based "position N" as contents[N-1] and DeepSeek's and Kimi's
// "at message index N" as messages[N]. block is set when the index names a
// content block (messages.N.content.M).
func providerIndex(providerErr string) (index string, block, ok bool) {
	ix, ok := sent.ParseIndex(providerErr)
	if !ok {
		return "", false, false
	}
	switch ix.Form {
	case sent.FormMessages:
		if ix.M >= 0 {
			return fmt.Sprintf("messages.%d.content.%d", ix.N, ix.M), true, true
		}
		return fmt.Sprintf("messages.%d", ix.N), false, true
	case sent.FormBracket, sent.FormAtIndex:
		return fmt.Sprintf("messages[%d]", ix.N), false, true
	case sent.FormInput:
		return fmt.Sprintf("input[%d]", ix.N), false, true
	case sent.FormContents, sent.FormPosition:
		return fmt.Sprintf("contents[%d]", ix.Entry()), false, true
	}
	return "", false, false
}

// checkSentIndex checks that the request `show` printed before the resume
// has the index the provider's error names (messages.N or
// messages.N.content.M, input[N], messages[N], contents[N]: see
// providerIndex), and that it maps to the stored message of the preflight
// finding that predicted the error, when one names it.
func checkSentIndex(t *testing.T, doc *sentDoc, providerErr string, findings []finding) {
	t.Helper()
	index, block, ok := providerIndex(providerErr)
	if !ok {
		t.Logf("the provider's error names no index: %q", providerErr)
		return
	}
	var msgID, partID string
	found := false
	for _, pm := range doc.Request.Messages {
		if !block && pm.Index == index {
			found = true
			if len(pm.Sources) == 1 {
				msgID = pm.Sources[0]
			}
		}
		for _, b := range pm.Blocks {
			if b.Index == index {
				found, msgID, partID = true, b.MessageID, b.PartID
			}
		}
	}
	if !found {
		t.Errorf("sessfix show --sent has no %s, which the provider's error names: %q", index, providerErr)
		return
	}
	for _, f := range findings {
		if f.Index != index || !isPreflight(f.Code) {
			continue
		}
		// The finding's part is what its repair changes (the thinking a
		// tool_use block precedes, say), not always the block at the index:
		// the message is what both must agree on.
		if f.MessageID != msgID {
			t.Errorf("show --sent maps %s to message %s, the preflight's %s to %s", index, msgID, f.Code, f.MessageID)
		}
	}
	t.Logf("show --sent: %s is stored %s %s", index, msgID, partID)
}
