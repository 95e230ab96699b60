//go:build acceptance

package opencodetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockopenai"
)

// Stores recorded with the provider families (see testdata/real/README.md).
const (
	storeAnthropic = "opencode-" + opencodetest.V1_18
	storeChat      = "opencode-" + opencodetest.V1_18 + "-openai-compatible"
	storeResponses = "opencode-" + opencodetest.V1_18 + "-openai-responses"
)

// plab is a real OpenCode 1.18.33 home for the provider experiments: a
// fresh one, or one holding a recorded store (see newLabFrom).
type plab struct {
	t  *testing.T
	e  *opencodetest.Env
	db *sql.DB
}

func newPLab(t *testing.T, opts opencodetest.Options, store string) *plab {
	t.Helper()
	if opts.Timeout == 0 {
		// Several experiments run at once: leave room for a loaded machine.
		opts.Timeout = 4 * time.Minute
	}
	if store != "" {
		l := newLabFrom(t, opts, store)
		return &plab{t: t, e: l.e, db: l.db}
	}
	opts.Version = opencodetest.V1_18
	return &plab{t: t, e: opencodetest.NewT(t, opts)}
}

// DB opens the home's database once OpenCode has made it.
func (x *plab) DB() *sql.DB {
	x.t.Helper()
	if x.db == nil {
		db, err := opencodetest.OpenDB(x.e.DBPath())
		if err != nil {
			x.t.Fatal(err)
		}
		x.t.Cleanup(func() { db.Close() })
		x.db = db
	}
	return x.db
}

func (x *plab) exec(q string, args ...any) {
	x.t.Helper()
	if _, err := x.DB().Exec(q, args...); err != nil {
		x.t.Fatalf("%s: %v", q, err)
	}
}

// byTitle is the id of the recorded session with that title.
func (x *plab) byTitle(title string) string {
	x.t.Helper()
	var id string
	if err := x.DB().QueryRow(`SELECT id FROM session WHERE title = ?`, title).Scan(&id); err != nil {
		x.t.Fatalf("session %q: %v", title, err)
	}
	return id
}

// msgs loads a session as stored.
func (x *plab) msgs(session string) []opencodetest.Message {
	x.t.Helper()
	m, err := opencodetest.LoadSession(x.e.DataDir(), session)
	if err != nil {
		x.t.Fatal(err)
	}
	return m
}

// editParts rewrites the data of every part of the session's assistant
// messages that match (message, part) with edit, and returns how many it
// changed.
func (x *plab) editParts(session string, match func(m opencodetest.Message, p opencodetest.Part) bool, edit func(data string) string) int {
	x.t.Helper()
	n := 0
	for _, m := range x.msgs(session) {
		if m.Role() != "assistant" {
			continue
		}
		for _, p := range m.Parts {
			if !match(m, p) {
				continue
			}
			var data string
			if err := x.DB().QueryRow(`SELECT data FROM part WHERE id = ?`, p.ID).Scan(&data); err != nil {
				x.t.Fatal(err)
			}
			if out := edit(data); out != data {
				x.exec(`UPDATE part SET data = ? WHERE id = ?`, out, p.ID)
				n++
			}
		}
	}
	return n
}

// deleteKey is an edit removing a key (sjson path) from a body.
func deleteKey(path string) func(string) string {
	return func(data string) string {
		out, err := sjson.Delete(data, path)
		if err != nil {
			panic(err)
		}
		return out
	}
}

func partIs(typ string) func(opencodetest.Message, opencodetest.Part) bool {
	return func(_ opencodetest.Message, p opencodetest.Part) bool { return p.Type() == typ }
}

func anyPart(opencodetest.Message, opencodetest.Part) bool { return true }

// excludeMessage gives an assistant message the error sessfix's
// excludeMessage writes (UnknownError, time.completed): OpenCode leaves
// errored messages out of what it sends.
func (x *plab) excludeMessage(id string) {
	x.t.Helper()
	var data string
	if err := x.DB().QueryRow(`SELECT data FROM message WHERE id = ?`, id).Scan(&data); err != nil {
		x.t.Fatal(err)
	}
	data, _ = sjson.Set(data, "error", map[string]any{"name": "UnknownError", "data": map[string]any{"message": "excluded by sessfix: experiment"}})
	if !gjson.Get(data, "time.completed").Exists() {
		data, _ = sjson.Set(data, "time.completed", gjson.Get(data, "time.created").Int()+1)
	}
	x.exec(`UPDATE message SET data = ? WHERE id = ?`, data, id)
}

// insertReasoning adds a reasoning part with text right after the
// step-start part of message m (ids order parts).
func (x *plab) insertReasoning(m opencodetest.Message, text string) {
	x.t.Helper()
	if len(m.Parts) < 2 || m.Parts[0].Type() != "step-start" {
		x.t.Fatalf("message %s does not start with step-start", m.ID)
	}
	id := idAfter(x.t, m.Parts[0].ID, m.Parts[1].ID)
	var created int64
	var session string
	if err := x.DB().QueryRow(`SELECT time_created, session_id FROM part WHERE id = ?`, m.Parts[0].ID).Scan(&created, &session); err != nil {
		x.t.Fatal(err)
	}
	data, _ := sjson.Set(`{"type":"reasoning"}`, "text", text)
	data, _ = sjson.Set(data, "time", map[string]any{"start": created, "end": created})
	x.exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
		id, m.ID, session, created, created, data)
}

// idAfter returns an OpenCode id sorting right after id (and before next).
func idAfter(t *testing.T, id, next string) string {
	t.Helper()
	n, err := strconv.ParseUint(id[4:16], 16, 64)
	if err != nil || len(id) != 30 {
		t.Fatalf("%q is not an OpenCode id", id)
	}
	out := fmt.Sprintf("%s_%012x%s", id[:3], n+1, id[16:])
	if out <= id || (next != "" && out >= next) {
		t.Fatalf("no id between %s and %s", id, next)
	}
	return out
}

// snapshot keeps a session's message and part rows; restore puts them
// back, so several repairs can be tried on one broken session.
type snapshot struct {
	session string
	msgs    [][]any
	parts   [][]any
}

func (x *plab) rows(q string, args ...any) [][]any {
	x.t.Helper()
	rs, err := x.DB().Query(q, args...)
	if err != nil {
		x.t.Fatal(err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			x.t.Fatal(err)
		}
		out = append(out, vals)
	}
	return out
}

func (x *plab) snapshot(session string) snapshot {
	return snapshot{session: session,
		msgs:  x.rows(`SELECT id, session_id, time_created, time_updated, data FROM message WHERE session_id = ?`, session),
		parts: x.rows(`SELECT id, message_id, session_id, time_created, time_updated, data FROM part WHERE session_id = ?`, session)}
}

func (x *plab) restore(s snapshot) {
	x.t.Helper()
	x.exec(`DELETE FROM part WHERE session_id = ?`, s.session)
	x.exec(`DELETE FROM message WHERE session_id = ?`, s.session)
	for _, r := range s.msgs {
		x.exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`, r...)
	}
	for _, r := range s.parts {
		x.exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`, r...)
	}
}

// turn is what one OpenCode run did at the OpenAI-shaped mock.
type turn struct {
	res  *opencodetest.Result
	reqs []mockopenai.Request // agent requests of the run
}

// rejected is the run's first rejected agent request, if any.
func (tn turn) rejected() (mockopenai.Request, bool) {
	for _, r := range tn.reqs {
		if r.Verdict == mockopenai.Rejected {
			return r, true
		}
	}
	return mockopenai.Request{}, false
}

func (tn turn) accepted() bool {
	_, rej := tn.rejected()
	return !rej && tn.res.ExitCode == 0 && len(tn.reqs) > 0
}

var idRe = regexp.MustCompile(`\b(rs|msg|fc|call|toolu)_[0-9A-Za-z]{20,}`)

// normID hides the random part of provider ids in a text.
func normID(s string) string { return idRe.ReplaceAllString(s, "${1}_…") }

// verdict is how a run ended, ids hidden.
func (tn turn) verdict() string {
	if r, ok := tn.rejected(); ok {
		return fmt.Sprintf("rejected %d: %s", r.Turn.Status, normID(r.Error))
	}
	if tn.accepted() {
		return "accepted"
	}
	return fmt.Sprintf("failed (exit %d, %d requests): %s", tn.res.ExitCode, len(tn.reqs), runError(tn.res))
}

// resume runs a prompt in an existing session and returns what the mock
// saw of it.
func (x *plab) resume(ctx context.Context, session, prompt string, extra ...string) turn {
	x.t.Helper()
	before := len(x.e.OpenAI.Requests())
	res, err := x.e.Resume(ctx, session, prompt, extra...)
	if err != nil {
		x.t.Fatal(err)
	}
	var reqs []mockopenai.Request
	for _, r := range x.e.OpenAI.Requests()[before:] {
		if r.Chat {
			reqs = append(reqs, r)
		}
	}
	return turn{res: res, reqs: reqs}
}

// storedError is the error OpenCode stored on the session's last assistant
// message (the failed attempt), ids hidden.
func (x *plab) storedError(session string) string {
	ms := x.msgs(session)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role() != "assistant" {
			continue
		}
		name, _ := opencodetest.Get(ms[i].Data, "error.name").(string)
		msg, _ := opencodetest.Get(ms[i].Data, "error.data.message").(string)
		if name == "" {
			return "(no error)"
		}
		return name + ": " + normID(msg)
	}
	return "(no assistant message)"
}

var indexRe = regexp.MustCompile(`index (\d+)`)

// where maps a rejected request's index or item id back to the stored
// session: "messages[N] = session message i (…)" or "rs_… = part i.j (…)".
func (x *plab) where(session string, r mockopenai.Request) string {
	ms := x.msgs(session)
	describe := func(i int) string {
		m := ms[i]
		s := fmt.Sprintf("session message %d (%s", i, m.Role())
		if p, _ := opencodetest.Get(m.Data, "providerID").(string); p != "" {
			s += " " + p + "/" + opencodetest.Get(m.Data, "modelID").(string)
		}
		return s + ")"
	}
	if c := r.Parsed.Completions; c != nil {
		mm := indexRe.FindStringSubmatch(r.Error)
		if mm == nil {
			return "no index in the text"
		}
		n, _ := strconv.Atoi(mm[1])
		if n >= len(c.Messages) || len(c.Messages[n].ToolCalls) == 0 {
			return fmt.Sprintf("messages[%d] is not a tool call", n)
		}
		callID := c.Messages[n].ToolCalls[0].ID
		for i, m := range ms {
			for _, p := range m.Parts {
				if p.Type() == "tool" && opencodetest.Get(p.Data, "callID") == callID {
					return fmt.Sprintf("messages[%d] = %s, its tool call", n, describe(i))
				}
			}
		}
		return fmt.Sprintf("messages[%d]: call id not stored", n)
	}
	id := idRe.FindString(r.Error)
	if id == "" {
		return "no id in the text"
	}
	for i, m := range ms {
		for j, p := range m.Parts {
			if opencodetest.Get(p.Data, "metadata.openai.itemId") == id {
				return fmt.Sprintf("%s = part %d.%d (%s) of %s", normID(id), i, j, p.Type(), describe(i))
			}
		}
	}
	return normID(id) + " not stored"
}

// repair is one storage edit tried on a broken session.
type repair struct {
	name string
	fix  func(x *plab, session string)
}

// experiment is one way sessions break: a session (recorded, or made by a
// live run), a resume, and repairs each tried on a copy of the broken
// session with another resume.
type experiment struct {
	name   string
	family opencodetest.Family
	store  string
	opts   opencodetest.Options
	// title names the recorded session to start from; breakIt, when set,
	// makes the broken session (from the recorded one, or from nothing)
	// and returns its id and what the break itself showed.
	title   string
	breakIt func(ctx context.Context, x *plab, session string) (string, string)
	// before runs before the resume (a config change, e.g. another
	// account).
	before  func(x *plab)
	prompt  string
	extra   []string
	repairs []repair
}

// run does the experiment and returns its line of the golden table.
func (ex experiment) run(t *testing.T) string {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	x := newPLab(t, ex.opts, ex.store)
	session := ""
	if ex.title != "" {
		session = x.byTitle(ex.title)
	}
	var cols []string
	if ex.breakIt != nil {
		var what string
		session, what = ex.breakIt(ctx, x, session)
		if what != "" {
			cols = append(cols, "break: "+what)
		}
	}
	if ex.before != nil {
		ex.before(x)
	}
	prompt := ex.prompt
	if prompt == "" {
		prompt = "Please continue."
	}
	// The ChatCompletions family is tried with the thinking rule on every
	// turn first; when that rejects, also with the measured scope (the
	// assistant messages after the last user message).
	scopes := []mockopenai.Scope{""}
	if ex.family == opencodetest.ChatCompletions {
		scopes = []mockopenai.Scope{mockopenai.ScopeAllTurns, mockopenai.ScopeSinceLastUser}
	}
	var failing mockopenai.Scope
	var broken *turn
	var snap snapshot
	for _, sc := range scopes {
		if sc != "" {
			x.e.OpenAI.SetReasoningScope(sc)
		}
		tn := x.resume(ctx, session, prompt, ex.extra...)
		label := "resume"
		if sc != "" {
			label += " (" + string(sc) + ")"
		}
		cols = append(cols, label+": "+tn.verdict())
		if tn.accepted() {
			break
		}
		if broken == nil {
			broken, failing = &tn, sc
			r, _ := tn.rejected()
			cols = append(cols, "stored: "+x.storedError(session), "maps to: "+x.where(session, r))
			snap = x.snapshot(session)
		}
	}
	if broken == nil {
		if len(ex.repairs) > 0 {
			t.Errorf("%s: not broken, yet repairs are listed", ex.name)
		}
		return ex.name + " | " + strings.Join(cols, " | ")
	}
	if failing != "" {
		x.e.OpenAI.SetReasoningScope(failing)
	}
	for _, rp := range ex.repairs {
		x.restore(snap)
		rp.fix(x, session)
		tn := x.resume(ctx, session, prompt, ex.extra...)
		cols = append(cols, "repair "+rp.name+": "+tn.verdict())
	}
	return ex.name + " | " + strings.Join(cols, " | ")
}

// assistantOf returns the session's i-th assistant message.
func (x *plab) assistantOf(session string, i int) opencodetest.Message {
	x.t.Helper()
	k := 0
	for _, m := range x.msgs(session) {
		if m.Role() == "assistant" {
			if k == i {
				return m
			}
			k++
		}
	}
	x.t.Fatalf("session %s has no assistant message %d", session, i)
	return opencodetest.Message{}
}

// toolStep is the session's first assistant message with a tool part.
func (x *plab) toolStep(session string) opencodetest.Message {
	x.t.Helper()
	for _, m := range x.msgs(session) {
		for _, p := range m.Parts {
			if p.Type() == "tool" {
				return m
			}
		}
	}
	x.t.Fatalf("session %s has no tool step", session)
	return opencodetest.Message{}
}

// newSession is the one session of the home that is not in before.
func (x *plab) newSession(before []string) string {
	ids, _ := opencodetest.Sessions(x.e.DataDir())
	for _, id := range ids {
		if !slices.Contains(before, id) {
			return id
		}
	}
	return ""
}

// killAt starts a new session with prompt, holds the n-th agent request's
// stream at stage and SIGKILLs OpenCode once stored reports (for the
// session's messages) that OpenCode wrote what the kill waits for.
func killAt(stage mockopenai.Stage, n int, prompt string, stored func(ms []opencodetest.Message) bool) func(context.Context, *plab, string) (string, string) {
	return func(ctx context.Context, x *plab, _ string) (string, string) {
		x.t.Helper()
		before, _ := opencodetest.Sessions(x.e.DataDir())
		pause := x.e.OpenAI.Pause(stage, x.e.OpenAI.NthAgent(n))
		defer pause.Release()
		proc, err := x.e.StartPrompt("", prompt)
		if err != nil {
			x.t.Fatal(err)
		}
		session := ""
		kctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		err = proc.KillAt(kctx, pause, func() bool {
			if session = x.newSession(before); session == "" {
				return false
			}
			ms, err := opencodetest.LoadSession(x.e.DataDir(), session)
			return err == nil && stored(ms)
		})
		if err != nil {
			x.t.Fatalf("kill at %s: %v", stage, err)
		}
		ms := x.msgs(session)
		return session, "killed message " + shape(ms[len(ms)-1])
	}
}

// shape describes what OpenCode stored of an assistant message: its parts
// with what matters to the providers, and whether it was finished.
func shape(m opencodetest.Message) string {
	var parts []string
	for _, p := range m.Parts {
		var flags []string
		switch p.Type() {
		case "reasoning", "text":
			if p.Text() == "" {
				flags = append(flags, `""`)
			} else {
				flags = append(flags, "text")
			}
		case "tool":
			flags = append(flags, fmt.Sprint(opencodetest.Get(p.Data, "state.status")))
		}
		if id, ok := opencodetest.Get(p.Data, "metadata.openai.itemId").(string); ok {
			flags = append(flags, "itemId "+normID(id))
		}
		if enc, ok := opencodetest.Get(p.Data, "metadata.openai").(map[string]any); ok {
			if v, ok := enc["reasoningEncryptedContent"]; ok {
				if v == nil {
					flags = append(flags, "encrypted null")
				} else {
					flags = append(flags, "encrypted")
				}
			}
		}
		s := p.Type()
		if len(flags) > 0 {
			s += " (" + strings.Join(flags, ", ") + ")"
		}
		parts = append(parts, s)
	}
	var state []string
	for _, k := range []string{"finish", "time.completed", "error"} {
		if opencodetest.Get(m.Data, k) == nil {
			state = append(state, "no "+k)
		}
	}
	return "[" + strings.Join(parts, ", ") + "] " + strings.Join(state, ", ")
}

// withoutReasoning runs a new session whose model answers a tool call
// with no reasoning, the way a thinking model sometimes does.
func withoutReasoning(ctx context.Context, x *plab, _ string) (string, string) {
	x.t.Helper()
	res, err := x.e.Prompt(ctx, "Quick one "+mockopenai.MarkerNoReasoning+" [[tool:bash echo hi]]")
	if err != nil {
		x.t.Fatal(err)
	}
	tn := turn{res: res, reqs: x.e.OpenAI.AgentRequests()}
	what := "live " + tn.verdict()
	if !tn.accepted() {
		what += "; stored: " + x.storedError(res.SessionID)
	}
	return res.SessionID, what
}

// lastAssistantHas reports whether the last assistant message has a part
// for which has is true.
func lastAssistantHas(has func(p opencodetest.Part) bool) func([]opencodetest.Message) bool {
	return func(ms []opencodetest.Message) bool {
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].Role() == "assistant" {
				return slices.ContainsFunc(ms[i].Parts, has)
			}
		}
		return false
	}
}

// someAssistantHas reports whether an assistant message has a part for
// which has is true.
func someAssistantHas(has func(p opencodetest.Part) bool) func([]opencodetest.Message) bool {
	return func(ms []opencodetest.Message) bool {
		return slices.ContainsFunc(ms, func(m opencodetest.Message) bool {
			return m.Role() == "assistant" && slices.ContainsFunc(m.Parts, has)
		})
	}
}

func typed(typ string) func(opencodetest.Part) bool {
	return func(p opencodetest.Part) bool { return p.Type() == typ }
}

func toolStatus(status string) func(opencodetest.Part) bool {
	return func(p opencodetest.Part) bool {
		return p.Type() == "tool" && opencodetest.Get(p.Data, "state.status") == status
	}
}

// fromProvider selects the parts (of type typ, or any when empty) of
// messages written by a provider.
func fromProvider(provider string, typ string) func(opencodetest.Message, opencodetest.Part) bool {
	return func(m opencodetest.Message, p opencodetest.Part) bool {
		return opencodetest.Get(m.Data, "providerID") == provider && (typ == "" || p.Type() == typ)
	}
}

const (
	promptTool = "Please run a command for me [[tool:bash echo hello again]]"
	// promptSleep's tool runs long enough to be killed while it runs.
	promptSleep = "Please wait a while [[tool:bash sleep 30]]"
)

var providerExperiments = []experiment{
	// OpenAI-compatible Chat Completions with reasoning_content.
	{
		name: "deepseek: anthropic turns resumed with deepseek-v4-pro", family: opencodetest.ChatCompletions,
		store: storeAnthropic, opts: opencodetest.Options{Providers: []string{"deepseek"}},
		breakIt: func(_ context.Context, x *plab, _ string) (string, string) { return realLoop, "" },
		prompt:  promptTool, extra: []string{"--model", opencodetest.DeepSeekModel},
	},
	{
		name: "deepseek: deepseek-chat turns resumed with deepseek-reasoner", family: opencodetest.ChatCompletions,
		store: storeChat, opts: opencodetest.Options{Model: opencodetest.DeepSeekChat}, title: "deepseek-chat tool loop",
		prompt: promptTool, extra: []string{"--model", opencodetest.DeepSeekReasoner},
	},
	{
		name: "kimi: anthropic turns resumed with moonshotai/kimi-k2.6", family: opencodetest.ChatCompletions,
		store: storeAnthropic, opts: opencodetest.Options{Providers: []string{"moonshotai"}},
		breakIt: func(_ context.Context, x *plab, _ string) (string, string) { return realLoop, "" },
		prompt:  promptTool, extra: []string{"--model", opencodetest.KimiModel},
	},
	{
		name: "kimi-custom: anthropic turns resumed with kimi/kimi-k2-thinking", family: opencodetest.ChatCompletions,
		store: storeAnthropic, opts: opencodetest.Options{Providers: []string{"kimi"}},
		breakIt: func(_ context.Context, x *plab, _ string) (string, string) { return realLoop, "" },
		prompt:  promptTool, extra: []string{"--model", opencodetest.KimiCustomModel},
		repairs: []repair{
			{"add a reasoning part (text) to the anthropic tool step", func(x *plab, s string) {
				x.insertReasoning(x.toolStep(s), "(reasoning not recorded)")
			}},
			{"excludeMessage on the anthropic tool step", func(x *plab, s string) { x.excludeMessage(x.toolStep(s).ID) }},
		},
	},
	{
		name: "kimi-custom: a tool step the model made without reasoning", family: opencodetest.ChatCompletions,
		opts:    opencodetest.Options{Model: opencodetest.KimiCustomModel},
		breakIt: withoutReasoning,
		repairs: []repair{
			{"add a reasoning part (text) to the tool step", func(x *plab, s string) {
				x.insertReasoning(x.toolStep(s), "(reasoning not recorded)")
			}},
			{"add an empty reasoning part to the tool step", func(x *plab, s string) { x.insertReasoning(x.toolStep(s), "") }},
			{"excludeMessage on the tool step", func(x *plab, s string) { x.excludeMessage(x.toolStep(s).ID) }},
		},
	},
	{
		name: "deepseek: a tool step the model made without reasoning", family: opencodetest.ChatCompletions,
		opts:    opencodetest.Options{Model: opencodetest.DeepSeekModel},
		breakIt: withoutReasoning,
	},
	{
		name: "kimi-custom: SIGKILL mid-reasoning", family: opencodetest.ChatCompletions,
		opts:    opencodetest.Options{Model: opencodetest.KimiCustomModel},
		breakIt: killAt(mockopenai.StageReasoningDelta, 0, promptTool, lastAssistantHas(typed("reasoning"))),
	},
	{
		name: "kimi-custom: SIGKILL while the tool runs", family: opencodetest.ChatCompletions,
		opts:    opencodetest.Options{Model: opencodetest.KimiCustomModel},
		breakIt: killAt(mockopenai.StageDone, 0, promptSleep, lastAssistantHas(toolStatus("running"))),
	},
	{
		name: "kimi-custom: SIGKILL after the tool result, before the answer", family: opencodetest.ChatCompletions,
		opts:    opencodetest.Options{Model: opencodetest.KimiCustomModel},
		breakIt: killAt(mockopenai.StageReceived, 1, promptTool, someAssistantHas(toolStatus("completed"))),
	},

	// OpenAI Responses (openai provider, store false).
	{
		name: "openai: another account (API key)", family: opencodetest.Responses,
		store: storeResponses, opts: opencodetest.Options{Model: opencodetest.OpenAIModel}, title: "openai two turns",
		before: func(x *plab) {
			if err := x.e.Configure(func(o *opencodetest.Options) {
				o.APIKeys = map[string]string{"openai": "sk-mock-openai-other-account"}
			}); err != nil {
				x.t.Fatal(err)
			}
		},
		repairs: []repair{
			{"drop metadata.openai.itemId", func(x *plab, s string) {
				x.editParts(s, anyPart, deleteKey("metadata.openai.itemId"))
			}},
			{"drop metadata.openai.reasoningEncryptedContent", func(x *plab, s string) {
				x.editParts(s, partIs("reasoning"), deleteKey("metadata.openai.reasoningEncryptedContent"))
			}},
		},
	},
	{
		name: "openai: gpt-5.2 turns resumed with gpt-5.3-codex-spark", family: opencodetest.Responses,
		store: storeResponses, opts: opencodetest.Options{Model: opencodetest.OpenAIModel}, title: "openai two turns",
		extra: []string{"--model", opencodetest.OpenAICodexModel},
	},
	{
		name: "openai: store switched to true", family: opencodetest.Responses,
		store: storeResponses, opts: opencodetest.Options{Model: opencodetest.OpenAIModel}, title: "openai two turns",
		before: func(x *plab) {
			if err := x.e.Configure(func(o *opencodetest.Options) {
				o.ModelOptions = map[string]map[string]any{opencodetest.OpenAIModel: {"store": true}}
			}); err != nil {
				x.t.Fatal(err)
			}
		},
		repairs: []repair{
			{"drop metadata.openai.itemId of reasoning parts", func(x *plab, s string) {
				x.editParts(s, partIs("reasoning"), deleteKey("metadata.openai.itemId"))
			}},
			{"drop metadata.openai.itemId of every part", func(x *plab, s string) {
				x.editParts(s, fromProvider("openai", ""), deleteKey("metadata.openai.itemId"))
			}},
		},
	},
	{
		name: "openai: SIGKILL mid-reasoning", family: opencodetest.Responses,
		opts:    opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: killAt(mockopenai.StageReasoningDelta, 0, promptTool, lastAssistantHas(typed("reasoning"))),
	},
	{
		name: "openai: SIGKILL after the reasoning item, before the function call", family: opencodetest.Responses,
		opts: opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: killAt(mockopenai.StageReasoningDone, 0, promptTool, lastAssistantHas(func(p opencodetest.Part) bool {
			enc, _ := opencodetest.Get(p.Data, "metadata.openai.reasoningEncryptedContent").(string)
			return p.Type() == "reasoning" && enc != ""
		})),
		repairs: []repair{
			{"drop metadata.openai.itemId of the reasoning part", func(x *plab, s string) {
				x.editParts(s, partIs("reasoning"), deleteKey("metadata.openai.itemId"))
			}},
			{"drop metadata.openai.reasoningEncryptedContent of the reasoning part", func(x *plab, s string) {
				x.editParts(s, partIs("reasoning"), deleteKey("metadata.openai.reasoningEncryptedContent"))
			}},
			{"excludeMessage on the killed message", func(x *plab, s string) { x.excludeMessage(x.assistantOf(s, 0).ID) }},
		},
	},
	{
		name: "openai: SIGKILL mid-text", family: opencodetest.Responses,
		opts:    opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: killAt(mockopenai.StageTextDelta, 0, "Tell me something", lastAssistantHas(typed("text"))),
	},
	{
		name: "openai: SIGKILL while the tool runs", family: opencodetest.Responses,
		opts:    opencodetest.Options{Model: opencodetest.OpenAIModel},
		breakIt: killAt(mockopenai.StageDone, 0, promptSleep, lastAssistantHas(toolStatus("running"))),
	},
}

// breaksAtOnce is how many experiments TestProviderBreaks runs at once.
const breaksAtOnce = 3

// TestProviderBreaks breaks sessions the ways users report for the
// OpenAI-compatible (DeepSeek, Kimi) and OpenAI Responses families, with
// real OpenCode 1.18.33 against mockopenai, resumes them, and tries
// storage repairs; the outcomes must match
// testdata/providers-1.18.33.golden (-update rewrites it). OBSERVED.md
// explains them.
func TestProviderBreaks(t *testing.T) {
	var (
		mu    sync.Mutex
		lines = make([]string, len(providerExperiments))
	)
	// The experiments mostly wait on OpenCode and the mock, not on the CPU:
	// run several at once, more than -parallel's default of one per core.
	sem := make(chan struct{}, breaksAtOnce)
	t.Run("run", func(t *testing.T) {
		var wg sync.WaitGroup
		for i, ex := range providerExperiments {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				t.Run(ex.name, func(t *testing.T) {
					line := ex.run(t)
					t.Log(line)
					mu.Lock()
					lines[i] = line
					mu.Unlock()
				})
			}()
		}
		wg.Wait()
	})
	if slices.Contains(lines, "") {
		t.Log("not every experiment ran (filtered with -run, or failed): testdata/providers-1.18.33.golden not checked")
		return
	}
	out := "# OpenCode 1.18.33 against mockopenai: how sessions break and which storage repair makes the next resume accepted.\n" +
		"# experiment | [break: what the breaking run showed] | resume (scope of the thinking rule): verdict | stored: the failed attempt's error | maps to: the stored message/part the error names | repair …: verdict of the next resume\n" +
		strings.Join(lines, "\n") + "\n"
	golden(t, "providers-"+opencodetest.V1_18+".golden", []byte(out))
}
