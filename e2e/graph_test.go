//go:build acceptance

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

// graphRun is the base's two-turn session in a fresh OpenCode 1.18.33 home,
// with its `opencode export` document.
type graphRun struct {
	*caseRun
	ctx    context.Context
	export []byte
}

func newGraphRun(t *testing.T) *graphRun {
	t.Helper()
	b := getBase(t, opencodetest.V1_18)
	acquire(t)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18})
	b.adopt(t, e)
	d := dataDir{t: t, dir: e.DataDir()}
	g := &graphRun{
		caseRun: &caseRun{t: t, version: opencodetest.V1_18, e: e, d: d, session: b.loop, msgs: d.session(b.loop)},
		ctx:     testCtx(t, 10*time.Minute),
	}
	doc, res, err := e.Export(g.ctx, b.loop)
	if err != nil {
		t.Fatalf("opencode export: %v\n%s", err, res)
	}
	g.export = doc
	return g
}

// write saves an export document as a file a user would hand to
// `opencode import`.
func (g *graphRun) write(doc []byte) string {
	g.t.Helper()
	path := filepath.Join(g.t.TempDir(), "export.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		g.t.Fatal(err)
	}
	return path
}

// importFile removes the session from the store and runs `opencode import
// FILE`, so the file is the session's only source, as on another machine.
// It returns the rows the import left: messages and parts.
func (g *graphRun) importFile(path string) (msgs, parts int) {
	g.t.Helper()
	db := g.d.db()
	defer db.Close()
	for _, q := range []string{`DELETE FROM part WHERE session_id = ?`, `DELETE FROM message WHERE session_id = ?`, `DELETE FROM session WHERE id = ?`} {
		if _, err := db.Exec(q, g.session); err != nil {
			g.t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := g.e.Run(g.ctx, "import", path)
	if err != nil || res.ExitCode != 0 {
		g.t.Fatalf("opencode import %s: %v\n%s", path, err, res)
	}
	if err := db.QueryRow(`SELECT count(*) FROM message WHERE session_id = ?`, g.session).Scan(&msgs); err != nil {
		g.t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM part WHERE session_id = ?`, g.session).Scan(&parts); err != nil {
		g.t.Fatal(err)
	}
	return msgs, parts
}

// loads checks that OpenCode serves and exports the session, and returns
// the export.
func (g *graphRun) loads() []byte {
	g.t.Helper()
	if status, body := g.serve(); status != 200 {
		g.t.Fatalf("GET /session/:id/message: %d %s", status, body)
	}
	doc, res, err := g.e.Export(g.ctx, g.session)
	if err != nil {
		g.t.Fatalf("opencode export: %v\n%s", err, res)
	}
	return doc
}

// withCode picks the findings of one rule.
func withCode(fs []finding, code string) []finding {
	var out []finding
	for _, f := range fs {
		if f.Code == code {
			out = append(out, f)
		}
	}
	return out
}

// TestAssistantFirst proves SF210 on real OpenCode 1.18.33: an export that
// lost the user message opening the conversation (cut by hand or by a tool
// that merges exports; #31048 reports such histories after imports) is
// imported as it is, and the session's history then begins with an
// assistant message. `sessfix scan` reports SF210 with Anthropic's error on
// the export file and on the store, `sessfix fix` invents nothing, and the
// resume is rejected by the strict mock with exactly the predicted error,
// which OpenCode stores as the turn's error and `sessfix diagnose` maps
// back to SF210.
func TestAssistantFirst(t *testing.T) {
	t.Parallel()
	g := newGraphRun(t)
	if role := gjson.GetBytes(g.export, "messages.0.info.role").Str; role != "user" {
		t.Fatalf("the export begins with a %q message", role)
	}
	answer := gjson.GetBytes(g.export, "messages.1.info.id").Str
	lost, err := sjson.DeleteBytes(g.export, "messages.0")
	if err != nil {
		t.Fatal(err)
	}
	file := g.write(lost)

	check := func(where string, fs []finding) {
		t.Helper()
		got := withCode(fs, "SF210")
		if len(got) != 1 || got[0].Severity != "error" || got[0].MessageID != answer || got[0].Index != "messages.0" ||
			got[0].ProviderError != mockanthropic.TextFirstNotUser {
			t.Fatalf("%s: SF210 %+v, want one error on %s at messages.0 predicting %q", where, got, answer, mockanthropic.TextFirstNotUser)
		}
	}
	fs, _ := scanPath(t, g.e, file, g.session)
	check("scan of the export file", fs)

	if msgs, _ := g.importFile(file); msgs != len(g.msgs)-1 {
		t.Fatalf("opencode import kept %d messages, want %d", msgs, len(g.msgs)-1)
	}
	g.loads()
	fs, _ = scanStore(t, g.e, g.session)
	check("scan of the store", fs)

	// Report only: the lost prompt is not invented.
	before := storeState(t, g.d)
	if res := sessfix(t, g.e, "fix", "--yes", "--session", g.session); res.ExitCode != 1 {
		t.Fatalf("fix --yes on a session SF210 reports: want exit 1 (findings remain)\n%s", res)
	}
	if storeState(t, g.d) != before {
		t.Fatal("fix changed the session SF210 reports")
	}

	v := g.resume("Please continue.")
	if v.State != "rejected" || v.Error != mockanthropic.TextFirstNotUser {
		t.Fatalf("resume: %s, want rejected with %q", v, mockanthropic.TextFirstNotUser)
	}
	msgs := g.d.session(g.session)
	last := msgs[len(msgs)-1]
	stored, _ := opencodetest.Get(last.Data, "error.data.message").(string)
	if last.Role() != "assistant" || stored != mockanthropic.TextFirstNotUser {
		t.Fatalf("OpenCode stored %q on its failed turn, want %q", stored, mockanthropic.TextFirstNotUser)
	}
	fs, _ = scanStore(t, g.e, g.session)
	check("scan after the failed resume", fs)

	// The stored error leads back to SF210, with nothing to repair.
	res := sessfix(t, g.e, "diagnose", "--format", "json", "--error", stored)
	var diag struct {
		SessionID string    `json:"session"`
		ErrorType string    `json:"error_type"`
		Causes    []finding `json:"causes"`
		Fix       struct {
			Edits []string `json:"edits"`
		} `json:"fix"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &diag); err != nil || res.ExitCode != 1 {
		t.Fatalf("diagnose: %v\n%s", err, res)
	}
	if diag.SessionID != g.session || diag.ErrorType != "first_message_not_user" || len(diag.Causes) != 1 ||
		diag.Causes[0].Code != "SF210" || diag.Causes[0].MessageID != answer || len(diag.Fix.Edits) != 0 {
		t.Fatalf("diagnose maps the stored error to %+v, want SF210 on %s and no edit\n%s", diag, answer, res)
	}
	before = storeState(t, g.d)
	if res := sessfix(t, g.e, "fix", "--yes", "--session", g.session); res.ExitCode != 1 || storeState(t, g.d) != before {
		t.Fatalf("fix --yes after the failed resume: want exit 1 and nothing changed\n%s", res)
	}
}

// TestDuplicateIDs proves SF211 on real OpenCode 1.18.33: an export holding
// one message twice (an identical copy of the second prompt) and one part id
// under two messages (the first answer's text part carries the second's id). `opencode import`
// takes it without a word and keeps the first record of each id, so the
// second message loses its text and the resume is rejected. `sessfix fix`
// with its defaults re-keys the part in the file; the fixed file imports
// with every part, loads, exports, and resumes with a request the strict
// mock accepts holding every answer, as long as `sessfix show --sent` said
// on the file; `sessfix undo` puts the file back
// byte for byte.
func TestDuplicateIDs(t *testing.T) {
	t.Parallel()
	g := newGraphRun(t)
	healthyMsgs := len(gjson.GetBytes(g.export, "messages").Array())
	healthyParts := len(gjson.GetBytes(g.export, "messages.#.parts|@flatten").Array())

	// The first two assistant messages with text: the first one's text part
	// takes the second one's id.
	type text struct {
		msg, part int
		id, text  string
	}
	var texts []text
	for i, m := range gjson.GetBytes(g.export, "messages").Array() {
		for k, p := range m.Get("parts").Array() {
			if m.Get("info.role").Str == "assistant" && p.Get("type").Str == "text" {
				texts = append(texts, text{i, k, p.Get("id").Str, p.Get("text").Str})
				break
			}
		}
	}
	if len(texts) < 2 {
		t.Fatalf("the export has %d assistant messages with text, want 2", len(texts))
	}
	first, second := texts[0], texts[1]
	// The message twice: the second prompt, at the end of the file.
	prompt := gjson.GetBytes(g.export, `messages.#(info.role=="user")#`).Array()
	if len(prompt) < 2 {
		t.Fatalf("the export has %d user messages, want 2", len(prompt))
	}
	broken, err := sjson.SetRawBytes(g.export, "messages.-1", []byte(prompt[1].Raw))
	if err == nil {
		broken, err = sjson.SetBytes(broken, fmt.Sprintf("messages.%d.parts.%d.id", first.msg, first.part), second.id)
	}
	if err != nil {
		t.Fatal(err)
	}
	file := g.write(broken)

	// What OpenCode does with the broken file.
	msgs, parts := g.importFile(file)
	if msgs != healthyMsgs || parts != healthyParts-1 {
		t.Fatalf("opencode import of the broken file kept %d messages and %d parts, want %d and %d (one copy of each id)",
			msgs, parts, healthyMsgs, healthyParts-1)
	}
	if v := g.resume("Please continue."); v.State != "rejected" {
		t.Fatalf("resume of the broken import: %s, want rejected (the second answer lost its text)", v)
	}

	fs, _ := scanPath(t, g.e, file, g.session)
	dups := withCode(fs, "SF211")
	var sev []string
	for _, f := range dups {
		sev = append(sev, f.Severity)
	}
	slices.Sort(sev)
	if !slices.Equal(sev, []string{"error", "info"}) {
		t.Fatalf("scan of the broken file: SF211 %+v, want an error for the part and an info for the identical message", dups)
	}

	if res := sessfix(t, g.e, "fix", "--yes", file); res.ExitCode != 0 {
		t.Fatalf("fix --yes on the export file:\n%s", res)
	}
	fixed, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ = scanPath(t, g.e, file, g.session)
	for _, f := range withCode(fs, "SF211") {
		if f.Severity != "info" {
			t.Errorf("after the fix: %+v", f)
		}
	}
	rekeyed := gjson.GetBytes(fixed, fmt.Sprintf("messages.%d.parts.%d.id", second.msg, second.part)).Str
	if rekeyed == second.id || !strings.HasPrefix(rekeyed, "prt_") {
		t.Fatalf("the duplicate part's id after the fix: %q", rekeyed)
	}

	predicted := showSentIn(t, g.e, file, g.session)
	msgs, parts = g.importFile(file)
	if msgs != healthyMsgs || parts != healthyParts {
		t.Fatalf("opencode import of the fixed file kept %d messages and %d parts, want %d and %d", msgs, parts, healthyMsgs, healthyParts)
	}
	doc := g.loads()
	var exp exportDoc
	if err := json.Unmarshal(doc, &exp); err != nil || len(exp.Messages) != healthyMsgs {
		t.Fatalf("opencode export after the import holds %d messages (%v), want %d", len(exp.Messages), err, healthyMsgs)
	}
	if v := g.resume("Please continue."); v.State != "accepted" {
		t.Fatalf("resume after the fix: %s", v)
	}
	req := g.e.Mock.ChatRequests()[0].Parsed
	if len(req.Messages) != len(predicted.Request.Messages) {
		t.Errorf("OpenCode sent %d messages, sessfix show --sent on the fixed file said %d", len(req.Messages), len(predicted.Request.Messages))
	}
	// The prompt the file holds twice is sent once, as show --sent said.
	promptPart := prompt[1].Get(`parts.#(type=="text")`)
	var sent []string
	var promptSent, promptPredicted int
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if m.Role == "assistant" && b.Type == "text" {
				sent = append(sent, b.Text)
			}
			if m.Role == "user" && b.Type == "text" && b.Text == promptPart.Get("text").Str {
				promptSent++
			}
		}
	}
	for _, m := range predicted.Request.Messages {
		for _, b := range m.Blocks {
			if b.PartID == promptPart.Get("id").Str {
				promptPredicted++
			}
		}
	}
	if promptSent != 1 || promptPredicted != 1 {
		t.Errorf("the prompt held twice: sent %d times, predicted %d times, want once", promptSent, promptPredicted)
	}
	for _, x := range []text{first, second} {
		if !slices.Contains(sent, x.text) {
			t.Errorf("the resumed request lacks the answer %q (sent %q)", x.text, sent)
		}
	}

	if res := sessfix(t, g.e, "undo", "--last"); res.ExitCode != 0 {
		t.Fatalf("undo --last:\n%s", res)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != string(broken) {
		t.Fatalf("undo did not restore the export file byte for byte (%v)", err)
	}
}
