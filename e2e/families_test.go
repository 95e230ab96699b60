//go:build acceptance

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// familyCase is one way a session of another provider family than
// Anthropic breaks, the way the lab broke it (internal/opencodetest,
// OBSERVED.md "Breaks, rejections and repairs"), starting from a session
// real OpenCode 1.18.33 recorded against that family's mock
// (testdata/real).
type familyCase struct {
	name string
	// what is the break, for docs/compatibility.md.
	what string
	// store is the recorded data dir under testdata/real; title names the
	// session ("" for the store's session with a tool call).
	store, title string
	opts         opencodetest.Options
	// extra are the flags of every resume (a model switch).
	extra []string
	// breakIt breaks the stored session or the account the mock sees.
	breakIt func(c *famRun)
	// errorType is the class SF302 must give the stored error; text is
	// what the mock's error must contain.
	errorType, text string
	// unforeseen says why a scan of the stored session cannot predict
	// the rejection before any resume; "" when it must: a finding whose
	// provider error is exactly the mock's.
	unforeseen string
}

// killedAfterReasoning leaves what a SIGKILL after a Responses turn's
// reasoning item leaves (OBSERVED.md): the first tool step keeps step-start
// and the finished reasoning (item id, encrypted content), no finish, no
// time.completed, and nothing after it.
func killedAfterReasoning(c *famRun) {
	tool := c.assistant(0)
	for _, m := range c.msgs[slices.IndexFunc(c.msgs, func(m opencodetest.Message) bool { return m.ID == tool.ID })+1:] {
		c.deleteMessage(m.ID)
	}
	for _, p := range tool.Parts {
		if p.Type() != "step-start" && p.Type() != "reasoning" {
			c.d.deletePart(tool.ID, p.ID)
		}
	}
	c.deleteMessageKeys(tool.ID, "finish", "time.completed")
}

var familyCases = []familyCase{
	{
		name: "openai-another-account", what: "another API key (account) than the one the encrypted reasoning was issued to", store: "opencode-1.18.33-openai-responses", title: "openai two turns",
		opts: opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: func(c *famRun) {
			c.configure(func(o *opencodetest.Options) {
				o.APIKeys = map[string]string{"openai": "sk-mock-openai-other-account"}
			})
		},
		errorType: "encrypted_content_invalid", text: "could not be verified.",
		unforeseen: "the account is not stored in the session",
	},
	{
		name: "openai-store-switched-to-true", what: "the model option `store` switched to true on a session made with store false", store: "opencode-1.18.33-openai-responses", title: "openai two turns",
		opts: opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: func(c *famRun) {
			c.configure(func(o *opencodetest.Options) {
				o.ModelOptions = map[string]map[string]any{opencodetest.OpenAIModel: {"store": true}}
			})
		},
		errorType: "item_not_persisted", text: "Items are not persisted when `store` is set to false.",
		unforeseen: "`store` is the user's config, not stored in the session",
	},
	{
		// What a SIGKILL after the reasoning item leaves (OBSERVED.md):
		// the turn's message holds step-start and the finished reasoning
		// (item id, encrypted content), no finish, no time.completed.
		name: "openai-killed-after-reasoning", what: "SIGKILL after the reasoning item, before the function call (the stored shape of the kill)", store: "opencode-1.18.33-openai-responses", title: "openai tool loop",
		opts:      opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt:   killedAfterReasoning,
		errorType: "reasoning_without_following_item", text: "of type 'reasoning' was provided without its required following item.",
	},
	{
		// The same kill on OpenCode Zen's GPT model: 1.18.33 sends it
		// through @ai-sdk/openai, so the stored shape and the refusal are
		// the openai provider's.
		name: "zen-killed-after-reasoning", what: "SIGKILL after the reasoning item, before the function call, on OpenCode Zen's GPT model (the stored shape of the kill)", store: "opencode-1.18.33-zen", title: "zen tool loop",
		opts:      opencodetest.Options{Model: opencodetest.ZenOpenAIModel},
		breakIt:   killedAfterReasoning,
		errorType: "reasoning_without_following_item", text: "of type 'reasoning' was provided without its required following item.",
	},
	{
		name: "zen-another-account", what: "another OpenCode Zen API key than the one the encrypted reasoning was issued to", store: "opencode-1.18.33-zen", title: "zen two turns",
		opts: opencodetest.Options{Model: opencodetest.ZenOpenAIModel},
		breakIt: func(c *famRun) {
			c.configure(func(o *opencodetest.Options) {
				o.APIKeys = map[string]string{"opencode": "sk-mock-zen-other-account"}
			})
		},
		errorType: "encrypted_content_invalid", text: "could not be verified.",
		unforeseen: "the account is not stored in the session",
	},
	{
		name: "kimi-tool-step-without-reasoning", what: "a tool step the model made without reasoning; the provider checks every turn", store: "opencode-1.18.33-openai-compatible", title: "kimi-custom tool loop",
		opts: opencodetest.Options{Model: opencodetest.KimiCustomModel},
		breakIt: func(c *famRun) {
			// The model answered the tool call with no reasoning.
			m := c.assistant(0)
			c.d.deletePart(m.ID, c.part(m, "reasoning").ID)
			c.e.OpenAI.SetReading(mockopenai.ReadingStrict)
		},
		errorType: "reasoning_content_missing", text: "reasoning_content is missing in assistant tool call message at index 2",
	},
	{
		name: "anthropic-then-kimi", what: "Anthropic turns resumed with a Kimi model OpenCode has no interleaved setting for; the provider checks every turn", store: "opencode-1.18.33",
		opts:  opencodetest.Options{Providers: []string{"kimi"}},
		extra: []string{"--model", opencodetest.KimiCustomModel},
		breakIt: func(c *famRun) {
			c.e.OpenAI.SetReading(mockopenai.ReadingStrict)
		},
		errorType: "reasoning_content_missing", text: "reasoning_content is missing in assistant tool call message at index 2",
		unforeseen: "the model is switched by the resume's --model",
	},
	{
		name: "anthropic-then-magistral", what: "Anthropic turns with tool calls resumed with a Mistral model OpenCode does not rewrite tool call ids for", store: "opencode-1.18.33",
		opts:      opencodetest.Options{Providers: []string{"mistralcompat"}},
		extra:     []string{"--model", opencodetest.MagistralModel},
		breakIt:   func(c *famRun) {},
		errorType: "tool_call_id_invalid", text: "but must be a-z, A-Z, 0-9, with a length of 9.",
		unforeseen: "the model is switched by the resume's --model",
	},
	{
		// A call stored without an id (anomalyco/opencode#1279: tool parts
		// with `callID: ""`, from a provider that gave its calls none,
		// refused once the session went on with Claude).
		name: "anthropic-tool-call-without-id", what: "a tool call stored without an id (`callID: \"\"`), as a provider that gives its calls none leaves it", store: "opencode-1.18.33",
		opts: opencodetest.Options{Model: opencodetest.DefaultModel},
		breakIt: func(c *famRun) {
			for _, m := range c.msgs {
				for _, p := range m.Parts {
					if p.Type() == "tool" {
						c.d.setPart(m.ID, p.ID, "callID", "")
					}
				}
			}
		},
		errorType: "tool_use_id_invalid", text: "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
	},
	{
		name: "gemini-another-account", what: "thought signatures issued to another account", store: "opencode-1.18.33-google",
		opts:      opencodetest.Options{Model: opencodetest.GoogleModel},
		breakIt:   func(c *famRun) { c.e.Gemini.SetSecret([]byte("another account")) },
		errorType: "thought_signature_corrupted", text: "Corrupted thought signature.",
		unforeseen: "the account is not stored in the session",
	},
	{
		// OpenCode Zen's Gemini model: 1.18.33 sends it through
		// @ai-sdk/google, signatures and refusal as the google provider's.
		name: "zen-gemini-another-account", what: "thought signatures issued to another account, on OpenCode Zen's Gemini model", store: "opencode-1.18.33-zen-gemini",
		opts:      opencodetest.Options{Model: opencodetest.ZenGoogleModel},
		breakIt:   func(c *famRun) { c.e.Gemini.SetSecret([]byte("another account")) },
		errorType: "thought_signature_corrupted", text: "Corrupted thought signature.",
		unforeseen: "the account is not stored in the session",
	},
	{
		name: "bedrock-another-account", what: "reasoning signed for another account (a switch of AWS account or key)",
		store:     "opencode-1.18.33-amazon-bedrock",
		opts:      opencodetest.Options{Model: opencodetest.BedrockModel},
		breakIt:   func(c *famRun) { c.e.Bedrock.SetSecret([]byte("another account")) },
		errorType: "invalid_signature", text: "Invalid `signature` in `thinking` block",
		unforeseen: "the account is not stored in the session",
	},
	{
		// What a SIGKILL mid-text leaves on Bedrock (OBSERVED.md): the
		// answer's text part "" after its signed reasoning.
		name: "bedrock-killed-mid-text", what: "SIGKILL when the answer text started: its text part is empty after signed reasoning", store: "opencode-1.18.33-amazon-bedrock",
		opts: opencodetest.Options{Model: opencodetest.BedrockModel},
		breakIt: func(c *famRun) {
			m := c.assistant(1)
			c.d.setPart(m.ID, c.part(m, "text").ID, "text", "")
		},
		errorType: "thinking_block_order", text: "The final block in an assistant message cannot be `thinking`.",
	},
}

// famRun is one family case in its own OpenCode home.
type famRun struct {
	caseRun
}

func (c *famRun) configure(change func(o *opencodetest.Options)) {
	c.t.Helper()
	if err := c.e.Configure(change); err != nil {
		c.t.Fatal(err)
	}
}

func (c *famRun) deleteMessage(id string) {
	c.t.Helper()
	db := c.d.db()
	defer db.Close()
	for _, q := range []string{`DELETE FROM part WHERE message_id = ?`, `DELETE FROM message WHERE id = ?`} {
		if _, err := db.Exec(q, id); err != nil {
			c.t.Fatalf("%s: %v", q, err)
		}
	}
}

func (c *famRun) deleteMessageKeys(id string, keys ...string) {
	c.t.Helper()
	db := c.d.db()
	defer db.Close()
	for _, k := range keys {
		if _, err := db.Exec(`UPDATE message SET data = json_remove(data, ?) WHERE id = ?`, "$."+k, id); err != nil {
			c.t.Fatal(err)
		}
	}
}

// rejected is every request any of the home's mocks rejected so far.
func (c *famRun) rejected() []string {
	var out []string
	for _, r := range c.e.Mock.Rejected() {
		out = append(out, r.Error)
	}
	for _, r := range c.e.OpenAI.Rejected() {
		out = append(out, r.Error)
	}
	for _, r := range c.e.Gemini.Rejected() {
		out = append(out, r.Error)
	}
	for _, r := range c.e.Bedrock.Rejected() {
		out = append(out, r.Error)
	}
	return out
}

// resume runs `opencode run --session ID PROMPT` (with the case's flags)
// and says what the mocks did.
func (c *famRun) resume(prompt string, extra []string) verdict {
	c.t.Helper()
	before := len(c.rejected())
	res, err := c.e.Resume(testCtx(c.t, 8*time.Minute), c.session, prompt, extra...)
	if err != nil {
		c.t.Fatalf("resume: %v", err)
	}
	v := verdict{Exit: res.ExitCode}
	if r := c.rejected(); len(r) > before {
		v.State, v.Error = "rejected", r[before]
		return v
	}
	if res.ExitCode != 0 {
		v.State, v.Error = "failed", c.opencodeError(res)
		c.t.Logf("opencode failed:\n%s", res)
		return v
	}
	v.State = "accepted"
	return v
}

// storedError is the error OpenCode stored on the session's last assistant
// message (the failed attempt).
func (c *famRun) storedError() string {
	msgs := c.d.session(c.session)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role() == "assistant" {
			s, _ := opencodetest.Get(msgs[i].Data, "error.data.message").(string)
			return s
		}
	}
	return ""
}

// newFamRun makes a home holding the case's recorded store, with its
// sessions moved into the home's project directory (OpenCode 1.18 runs a
// resumed session in the directory it recorded).
func newFamRun(t *testing.T, fc *familyCase) *famRun {
	t.Helper()
	opts := fc.opts
	opts.Version = opencodetest.V1_18
	e := opencodetest.NewT(t, opts)
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.LoadData(filepath.Join(root, "testdata", "real", fc.store)); err != nil {
		t.Fatal(err)
	}
	c := &famRun{caseRun{t: t, version: opencodetest.V1_18, e: e, d: dataDir{t: t, dir: e.DataDir()}}}
	db := c.d.db()
	defer db.Close()
	if _, err := db.Exec(`UPDATE session SET directory = ?, path = ?`, e.ProjectDir, strings.TrimPrefix(e.ProjectDir, "/")); err != nil {
		t.Fatal(err)
	}
	q := `SELECT id FROM session WHERE title = ?`
	args := []any{fc.title}
	if fc.title == "" {
		q = `SELECT DISTINCT session_id FROM part WHERE json_extract(data, '$.type') = 'tool' ORDER BY session_id LIMIT 1`
		args = nil
	}
	if err := db.QueryRow(q, args...).Scan(&c.session); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	c.msgs = c.d.session(c.session)
	return c
}

// familyOutcome is one row of docs/compatibility.md's provider families
// table.
type familyOutcome struct {
	Case, What, Model string
	Predicted         string  // what a scan before any resume said
	Before            verdict // ids hidden
	Recovery, Fix     string  // SF302's error type and default fix
	After             verdict
}

var providerIDRe = regexp.MustCompile(`\b(rs|msg|fc|call|toolu)_[0-9A-Za-z]{12,}`)

// hideIDs replaces the random part of provider ids in a text.
func hideIDs(s string) string { return providerIDRe.ReplaceAllString(s, "${1}_…") }

// runFamilyCase proves error-driven recovery for one family case with real
// OpenCode 1.18.33 and the strict mocks: the broken session is rejected on
// resume; `sessfix scan` then reports SF302 with the stored error's text
// and class, and diagnose maps it; `sessfix fix` with default flags
// repairs it; `undo --last` restores the store exactly; fixed again, the
// session resumes and the mock accepts it, and `opencode export` still
// holds every text the user wrote.
func runFamilyCase(t *testing.T, fc *familyCase) familyOutcome {
	acquire(t)
	c := newFamRun(t, fc)
	texts := userTexts(c.msgs)
	fc.breakIt(c)
	out := familyOutcome{Case: fc.name, What: fc.what, Model: fc.opts.Model}
	if i := slices.Index(fc.extra, "--model"); i >= 0 {
		out.Model = fc.extra[i+1]
	}

	early, earlyRes := scanStore(t, c.e, c.session)
	shown := showSent(t, c.e, c.session)
	out.Before = c.resume("continue", fc.extra)
	if out.Before.State != "rejected" || !strings.Contains(out.Before.Error, fc.text) {
		t.Fatalf("the broken session's resume: %s; want rejected with %q", out.Before, fc.text)
	}
	out.Predicted = prediction(t, fc, early, out.Before.Error, earlyRes)
	// show --sent models the stored model's request: a resume with another
	// model (--model) sends another family's request.
	if !slices.Contains(fc.extra, "--model") {
		checkSentIndex(t, shown, out.Before.Error, early)
	}
	stored := c.storedError()
	if !strings.Contains(stored, out.Before.Error) {
		t.Fatalf("OpenCode stored %q for the mock's %q", stored, out.Before.Error)
	}
	out.Before.Error = hideIDs(out.Before.Error)

	fs, res := scanStore(t, c.e, c.session)
	f := sf302(t, fs)
	if f.Severity != "error" || f.ErrorType != fc.errorType || f.ProviderError != stored || f.Fix == "" {
		t.Fatalf("SF302 %s %s %q (fix %q, provider error %q); want a fixable %s error with the stored text\n%s",
			f.Severity, f.ErrorType, f.Message, f.Fix, f.ProviderError, fc.errorType, res)
	}
	out.Recovery, out.Fix = f.ErrorType, f.Fix
	diag := sessfix(t, c.e, append(append([]string{"diagnose", "--format", "json", "--error", stored}, scanFlags...), c.e.DataDir())...)
	var d struct {
		ErrorType string `json:"error_type"`
		Fix       struct {
			Edits []string `json:"edits"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(diag.Stdout), &d); err != nil || d.ErrorType != fc.errorType || len(d.Fix.Edits) == 0 {
		t.Errorf("diagnose --error: %v %+v\n%s", err, d, diag)
	}

	broken := storeState(t, c.d)
	fix := func() {
		t.Helper()
		if res := sessfix(t, c.e, "fix", "--yes", "--session", c.session); res.ExitCode != 0 {
			t.Fatalf("fix\n%s", res)
		}
		left, res := scanStore(t, c.e, c.session)
		for _, g := range left {
			if g.Severity == "error" || g.Severity == "warning" {
				t.Errorf("after the fix: %s %s %s\n%s", g.Code, g.Severity, g.Message, res)
			}
		}
	}
	fix()
	if storeState(t, c.d) == broken {
		t.Fatal("fix changed nothing")
	}
	if res := sessfix(t, c.e, "undo", "--last"); res.ExitCode != 0 {
		t.Fatalf("undo --last\n%s", res)
	}
	if storeState(t, c.d) != broken {
		t.Fatal("undo did not restore the store exactly")
	}
	fix()

	out.After = c.resume("continue", fc.extra)
	if out.After.State != "accepted" {
		t.Errorf("after the fix the session does not resume: %s", out.After)
		return out
	}
	doc, r, err := c.e.Export(testCtx(t, 2*time.Minute), c.session)
	if err != nil || r.ExitCode != 0 {
		t.Fatalf("opencode export: %v\n%s", err, r)
	}
	var ex exportDoc
	if err := json.Unmarshal(doc, &ex); err != nil {
		t.Fatalf("opencode export printed no document: %v", err)
	}
	var exported []string
	for _, m := range ex.Messages {
		for _, p := range m.Parts {
			exported = append(exported, p.Text)
		}
	}
	for _, s := range texts {
		if !slices.Contains(exported, s) {
			t.Errorf("the export lost the user's text %q", s)
		}
	}
	return out
}

// prediction is the predicted column: the finding of the scan before any
// resume whose provider error is exactly the mock's, which must exist
// unless the case says why it cannot.
func prediction(t *testing.T, fc *familyCase, early []finding, rejected string, res fmt.Stringer) string {
	t.Helper()
	for _, f := range early {
		if (f.Severity == "error" || f.Severity == "warning") && f.ProviderError == rejected {
			if fc.unforeseen != "" {
				t.Errorf("%s predicts the rejection, but the case says it cannot (%s)", f.Code, fc.unforeseen)
			}
			return "yes: " + f.Code + ", the same text"
		}
	}
	if fc.unforeseen == "" {
		t.Errorf("no finding of the scan before the resume predicts the mock's %q\n%s", rejected, res)
	}
	return "no: " + fc.unforeseen
}

// renderFamilies writes docs/compatibility.md's provider families section.
func renderFamilies(b *bytes.Buffer, rows []familyOutcome) {
	if len(rows) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## Provider families: recovery from the stored error\n\n")
	p("Each row starts from a healthy session real OpenCode %s recorded against the strict mock of that provider\n", opencodetest.V1_18)
	p("family (`testdata/real`), broken the way the break column says; the resume is rejected and OpenCode stores the\n")
	p("failed attempt. **Predicted** is what `sessfix scan` said before that resume: the finding whose provider\n")
	p("error is exactly the mock's, or why the stored session alone cannot show the break. Then `sessfix scan` must\n")
	p("report SF302 with the stored text and the **recovery** type, `sessfix fix --yes` (no other hint) applies the\n")
	p("**fix**, `sessfix undo --last` must restore the store exactly, the fix runs again and the session is resumed\n")
	p("(**after**); `opencode export` must still hold every text the user wrote.\n")
	p("Provider ids in the texts are shown as `rs_…`.\n\n")
	p("| case | provider | break | predicted | before | recovery | fix | after |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p("| %s | %s | %s | %s | %s | %s | `%s` | %s |\n", r.Case, r.Model, cell(r.What), cell(r.Predicted), cell(r.Before.String()),
			r.Recovery, cell(r.Fix), cell(r.After.String()))
	}
}
