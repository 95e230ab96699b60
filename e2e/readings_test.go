//go:build acceptance

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// DeepSeek's and Kimi's thinking rule ("the reasoning_content of a turn
// that called tools must be passed back") is not settled in two ways
// (internal/opencodetest/OBSERVED.md, "What the rules rest on"): whether it
// covers every later request or only the current turn, and whether ""
// counts as passed back. The cases below run under both readings the mock
// knows (mockopenai.ReadingLenient, mockopenai.ReadingStrict) and at both
// times a user runs `sessfix fix`: before any resume, and right after a
// resume failed. Under every combination the session must resume after
// `sessfix fix --yes` (no other hint), with the tool calls and their
// outputs still in the request, and a healthy session must be left alone.
//
// Before any resume, the two readings share one run: nothing before the
// fix meets the row's reading (a switch is made under the lenient one), so
// OpenCode sends the same requests under both. The run goes under the
// strict reading, and the requests of the resume after the fix are judged
// again under the lenient one (judgeLenient); the strict reading refuses
// everything the lenient one does, so a strict pass must be a lenient pass
// too, and the test checks it rather than assuming it.

// readingCase is one DeepSeek or Kimi session: broken (a tool step without
// reasoning, a real model switch) or healthy.
type readingCase struct {
	name, what   string
	store, title string
	opts         opencodetest.Options
	// switchTo is the model of a real switch: the break is `opencode run
	// --session ID --model switchTo`, and every later resume keeps the flag.
	switchTo string
	// breakIt breaks the stored session (nil: the switch is the break, or
	// the session is healthy).
	breakIt func(c *famRun)
	healthy bool
}

// withoutReasoning deletes the reasoning of the n-th assistant message (a
// tool step): the model answered the call without reasoning.
func withoutReasoning(n int) func(c *famRun) {
	return func(c *famRun) {
		m := c.assistant(n)
		c.d.deletePart(m.ID, c.part(m, "reasoning").ID)
	}
}

const compatStore = "opencode-1.18.33-openai-compatible"

var readingCases = []readingCase{
	{name: "deepseek-healthy", what: "a healthy `deepseek-v4-pro` tool loop", store: compatStore, title: "deepseek tool loop",
		opts: opencodetest.Options{Model: opencodetest.DeepSeekModel}, healthy: true},
	{name: "deepseek-step-without-reasoning-last-turn", what: "a `deepseek-v4-pro` tool step the model made without reasoning, in the last turn",
		store: compatStore, title: "deepseek tool loop", opts: opencodetest.Options{Model: opencodetest.DeepSeekModel}, breakIt: withoutReasoning(0)},
	{name: "deepseek-step-without-reasoning-earlier-turn", what: "the same in the first of two turns",
		store: compatStore, title: "deepseek two turns", opts: opencodetest.Options{Model: opencodetest.DeepSeekModel}, breakIt: withoutReasoning(0)},
	{name: "anthropic-then-deepseek-reasoner", what: "Anthropic turns, then `opencode run --model deepseek/deepseek-reasoner` on the same session",
		store: "opencode-1.18.33", opts: opencodetest.Options{Providers: []string{"deepseek"}}, switchTo: opencodetest.DeepSeekReasoner},
	{name: "deepseek-chat-then-reasoner", what: "`deepseek-chat` turns (no reasoning), then `--model deepseek/deepseek-reasoner`",
		store: compatStore, title: "deepseek-chat tool loop", opts: opencodetest.Options{Model: opencodetest.DeepSeekChat}, switchTo: opencodetest.DeepSeekReasoner},
	{name: "kimi-custom-step-without-reasoning", what: "a `kimi/kimi-k2-thinking` tool step without reasoning (not interleaved: sent without the field)",
		store: compatStore, title: "kimi-custom tool loop", opts: opencodetest.Options{Model: opencodetest.KimiCustomModel}, breakIt: withoutReasoning(0)},
}

// readings are the mock's readings the cases run under, by name.
var readings = []struct {
	name string
	r    mockopenai.Reading
}{
	{"lenient", mockopenai.ReadingLenient},
	{"strict", mockopenai.ReadingStrict},
}

// timings are when `sessfix fix` runs.
const (
	timingBefore = "before any resume"
	timingAfter  = "right after a failed resume"
)

// readingOutcome is one row of docs/compatibility.md's readings table.
type readingOutcome struct {
	Case, Reading, Timing string
	Scan                  string  // what sessfix scan said before the fix
	Resume                verdict // the resume before the fix (timingAfter)
	Fix                   string  // the mutations fix wrote
	After                 verdict
	Kept                  string // the tool calls and outputs of the stored session in the last request
}

// runReadingCase runs one case under one reading and timing. Before any
// resume it runs under the strict reading and returns the lenient row as
// well, judged from the same requests (see above); lenient is then the
// zero row when the resume after the fix failed.
func runReadingCase(t *testing.T, rc *readingCase, reading string, r mockopenai.Reading, timing string) (out, lenient readingOutcome) {
	acquire(t)
	fc := &familyCase{store: rc.store, title: rc.title, opts: rc.opts}
	// The machine may be loaded: one OpenCode command gets longer than the
	// default two minutes.
	fc.opts.Timeout = 6 * time.Minute
	c := newFamRun(t, fc)
	out = readingOutcome{Case: rc.name, Reading: reading, Timing: timing}
	texts := userTexts(c.msgs)
	var extra []string
	if rc.switchTo != "" {
		extra = []string{"--model", rc.switchTo}
	}
	if rc.breakIt != nil {
		rc.breakIt(c)
	}
	if rc.switchTo != "" && timing == timingBefore {
		// The switch is made where the provider accepts it; the reading
		// under test applies from the next request on.
		c.e.OpenAI.SetReading(mockopenai.ReadingLenient)
		if v := c.resume("Switching models now.", extra); v.State != "accepted" {
			t.Fatalf("the switch to %s under the lenient reading: %s", rc.switchTo, v)
		}
		texts = append(texts, "Switching models now.")
	}
	c.e.OpenAI.SetReading(r)
	if timing == timingAfter {
		out.Resume = c.resume("continue", extra)
		texts = append(texts, "continue")
		// The readings differ exactly here: the strict one refuses every
		// broken session, the lenient one none of them.
		if want := "accepted"; (r == mockopenai.ReadingStrict && !rc.healthy) != (out.Resume.State != want) {
			t.Fatalf("the resume under the %s reading: %s", reading, out.Resume)
		}
	}
	fs, res := scanStore(t, c.e, c.session)
	out.Scan = readingScan(fs)
	if !rc.healthy && !strings.Contains(out.Scan, "SF163") {
		t.Errorf("scan does not report SF163 for the broken session\n%s", res)
	}
	if rc.healthy && out.Scan != "none" {
		t.Errorf("scan reports %s for a healthy session\n%s", out.Scan, res)
	}
	before := storeState(t, c.d)
	fix := sessfix(t, c.e, "fix", "--yes", "--format", "json", "--session", c.session)
	if fix.ExitCode != 0 {
		t.Fatalf("fix\n%s", fix)
	}
	out.Fix = fixMutations(t, fix)
	if rc.healthy != (storeState(t, c.d) == before) {
		t.Errorf("fix of a healthy=%v session changed the store: %v\n%s", rc.healthy, storeState(t, c.d) != before, fix)
	}
	left, res := scanStore(t, c.e, c.session)
	for _, g := range left {
		if g.Severity == "error" || g.Severity == "warning" {
			t.Errorf("after the fix: %s %s %s\n%s", g.Code, g.Severity, g.Message, res)
		}
	}
	sent := len(c.e.OpenAI.AgentRequests())
	out.After = c.resume("One more thing, please.", extra)
	texts = append(texts, "One more thing, please.")
	if out.After.State != "accepted" {
		t.Errorf("after the fix the session does not resume: %s", out.After)
		return out, lenient
	}
	out.Kept = keptCalls(t, c)
	checkTexts(t, c, texts)
	t.Logf("%+v", out)
	if timing == timingBefore {
		lenient = out
		lenient.Reading = "lenient"
		lenient.After = judgeLenient(t, c.e.OpenAI.AgentRequests()[sent:])
		t.Logf("%+v", lenient)
	}
	return out, lenient
}

// judgeLenient judges again, under the lenient reading, the agent requests
// the strict reading accepted: the verdict the lenient run would have had.
func judgeLenient(t *testing.T, reqs []mockopenai.Request) verdict {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("no agent request reached the mock after the fix")
	}
	r := mockopenai.ReadingLenient
	for _, q := range reqs {
		p := q.Parsed
		if p == nil || p.Completions == nil {
			t.Fatalf("agent request %s is not a Chat Completions request", q.Path)
		}
		v := mockopenai.ChatValidator{Dialect: p.Dialect, Thinking: p.Thinking, Scope: r.Scope, RejectEmpty: r.RejectEmpty}
		if e := v.Validate(p.Completions); e != nil {
			t.Errorf("the lenient reading refuses a request the strict one accepted: %s", e.Message)
			return verdict{State: "rejected", Error: e.Message}
		}
	}
	return verdict{State: "accepted"}
}

// readingScan is the scan column: the codes and severities of the
// findings above info.
func readingScan(fs []finding) string {
	var list []string
	for _, f := range fs {
		if f.Severity == "error" || f.Severity == "warning" {
			s := f.Code + " " + f.Severity
			if len(list) == 0 || list[len(list)-1] != s {
				list = append(list, s)
			}
		}
	}
	return codes(list)
}

// keptCalls checks that the last request the mock accepted holds every
// tool call of the stored session with its output, and that each goes with
// a non-empty reasoning_content.
func keptCalls(t *testing.T, c *famRun) string {
	t.Helper()
	reqs := c.e.OpenAI.AgentRequests()
	if len(reqs) == 0 {
		t.Fatal("no agent request reached the mock")
	}
	last := reqs[len(reqs)-1].Parsed.Completions
	calls, outputs := map[string]string{}, map[string]bool{}
	for _, m := range last.Messages {
		for _, tc := range m.ToolCalls {
			rc := ""
			if m.ReasoningContent != nil {
				rc = *m.ReasoningContent
			}
			calls[tc.ID] = rc
		}
		if m.Role == "tool" {
			outputs[m.ToolCallID] = true
		}
	}
	n, total := 0, 0
	for _, m := range c.msgs {
		for _, p := range m.Parts {
			if p.Type() != "tool" {
				continue
			}
			total++
			id, _ := opencodetest.Get(p.Data, "callID").(string)
			rc, ok := calls[id]
			if !ok || !outputs[id] {
				t.Errorf("tool call %s is not in the request with its output (call %v, output %v)", id, ok, outputs[id])
				continue
			}
			if strings.TrimSpace(rc) == "" {
				t.Errorf("tool call %s goes with an empty reasoning_content", id)
			}
			n++
		}
	}
	return fmt.Sprintf("%d of %d", n, total)
}

// checkTexts checks that the last request the mock accepted still holds
// every text the user wrote (OpenCode sends them wrapped in quotes).
func checkTexts(t *testing.T, c *famRun, texts []string) {
	t.Helper()
	reqs := c.e.OpenAI.AgentRequests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].Parsed.Completions.Messages {
		if m.Role == "user" {
			sent = append(sent, m.Text())
		}
	}
	for _, s := range texts {
		if !slices.ContainsFunc(sent, func(e string) bool { return strings.Contains(e, strings.Trim(strings.TrimSpace(s), `"`)) }) {
			t.Errorf("the request lost the user's text %q", s)
		}
	}
}

// fixMutations reads the mutations `sessfix fix --format json` wrote, in
// order, each once ("none" for none).
func fixMutations(t *testing.T, res *sfResult) string {
	t.Helper()
	var list []string
	for _, m := range []string{"adoptCurrentModel", "prependThinkingPart", "excludeMessage"} {
		if strings.Contains(res.Stdout, `"`+m+`"`) {
			list = append(list, m)
		}
	}
	return codes(list)
}

// addReadingRuns adds a parallel subtest of t for every case under every
// reading and timing; each hands its row to got. It returns the rows' keys
// in table order.
func addReadingRuns(t *testing.T, got func(key string, row readingOutcome)) []string {
	var keys []string
	for i := range readingCases {
		rc := &readingCases[i]
		for _, rd := range readings {
			for _, timing := range []string{timingBefore, timingAfter} {
				if rc.healthy && timing == timingAfter {
					continue
				}
				key := readingKey(rc, rd.name, timing)
				keys = append(keys, key)
				if timing == timingBefore && rd.r != mockopenai.ReadingStrict {
					// The strict run's row (below) judges this one.
					continue
				}
				lenientKey := readingKey(rc, "lenient", timing)
				t.Run("readings/"+key, func(t *testing.T) {
					t.Parallel()
					row, lenient := runReadingCase(t, rc, rd.name, rd.r, timing)
					got(key, row)
					if lenient.Case != "" {
						got(lenientKey, lenient)
					}
				})
			}
		}
	}
	return keys
}

// readingKey names a row of the readings table (and its subtest).
func readingKey(rc *readingCase, reading, timing string) string {
	return rc.name + "/" + reading + "/" + strings.ReplaceAll(timing, " ", "-")
}

// readingRows collects rows from parallel subtests.
type readingRows struct {
	mu   sync.Mutex
	rows map[string]readingOutcome
}

func (r *readingRows) add(key string, row readingOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rows == nil {
		r.rows = map[string]readingOutcome{}
	}
	r.rows[key] = row
}

// ordered returns the rows of keys, in order, and whether every key has one.
func (r *readingRows) ordered(keys []string) ([]readingOutcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []readingOutcome
	for _, k := range keys {
		if row, ok := r.rows[k]; ok {
			out = append(out, row)
		}
	}
	return out, len(out) == len(keys)
}

// readingsHeading starts docs/compatibility.md's readings section.
const readingsHeading = "\n## DeepSeek and Kimi under both readings of the thinking rule\n"

// renderReadings writes docs/compatibility.md's readings section.
func renderReadings(b *bytes.Buffer, rows []readingOutcome) {
	if len(rows) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("%s\n", readingsHeading)
	p("DeepSeek's and Kimi's thinking rule (a tool-call turn's `reasoning_content` must be passed back) is not settled\n")
	p("(`sessfix explain SF163`, internal/opencodetest/OBSERVED.md). Each row runs a session real OpenCode %s recorded\n", opencodetest.V1_18)
	p("(`testdata/real`) against the mock under one reading: **lenient** checks the assistant messages after the last user\n")
	p("message and accepts `reasoning_content: \"\"`; **strict** checks every turn and needs a non-empty `reasoning_content`.\n")
	p("A switch is a real `opencode run --session ID --model …`; for the **%s** rows it was made under the lenient\n", timingBefore)
	p("reading, then the row's reading applies. The two readings' **%s** rows are one run: nothing before the\n", timingBefore)
	p("fix meets the row's reading, so OpenCode sends the same requests under both; it runs under the strict reading, and\n")
	p("the requests after the fix are judged again under the lenient one (the lenient row's **after**).\n")
	p("**scan** is what `sessfix scan` reported before the fix (above info);\n")
	p("**resume** is the resume before the fix in the **%s** rows (the strict reading refuses it and\n", timingAfter)
	p("OpenCode stores the failed attempt; the lenient one accepts it); **fix** the mutations `sessfix fix --yes` (no other hint) wrote;\n")
	p("**after** the next resume; **kept** how many of the stored session's tool calls went in that request with their\n")
	p("output and a non-empty `reasoning_content`; that request must also hold every text the user wrote.\n\n")
	p("| case | reading | fix runs | scan | resume | fix | after | kept |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		resume := "n/a"
		if r.Resume.State != "" {
			resume = cell(hideIDs(r.Resume.String()))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Case, r.Reading, r.Timing, r.Scan, resume, r.Fix, cell(r.After.String()), r.Kept)
	}
	p("\nThe cases:\n\n")
	for _, rc := range readingCases {
		p("- `%s`: %s.\n", rc.name, rc.what)
	}
}

// checkReadingsSection checks the readings section of
// docs/compatibility.md against the rows of a run of every readings case
// (rewriting it with -update). TestCompatibility calls it when the
// readings cases ran alone (`-run 'TestCompatibility/run/readings/'`).
func checkReadingsSection(t *testing.T, got []readingOutcome) {
	t.Helper()
	var b bytes.Buffer
	renderReadings(&b, got)
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "compatibility.md")
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := spliceSection(old, readingsHeading, b.Bytes())
	if golden.Update() {
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(old, doc) {
		t.Errorf("docs/compatibility.md's readings section does not match this run; if the change is intended, "+
			"regenerate it with go test -tags acceptance ./e2e -run 'TestCompatibility/run/readings/' -update\n--- this run:\n%s", b.Bytes())
	}
}

// spliceSection replaces the section of doc that starts with heading (up to
// the next "\n## " or the end) by section; a doc without it gets section
// before its last "\n## " heading.
func spliceSection(doc []byte, heading string, section []byte) []byte {
	start := bytes.Index(doc, []byte(heading))
	if start < 0 {
		start = bytes.LastIndex(doc, []byte("\n## "))
		if start < 0 {
			start = len(doc)
		}
		return append(append(append([]byte(nil), doc[:start]...), section...), doc[start:]...)
	}
	end := len(doc)
	if k := bytes.Index(doc[start+len(heading):], []byte("\n## ")); k >= 0 {
		end = start + len(heading) + k
	}
	return append(append(append([]byte(nil), doc[:start]...), section...), doc[end:]...)
}
