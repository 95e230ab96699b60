//go:build acceptance

package opencodetest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// Ids of the recorded multi-turn session: user, assistant, user, assistant.
const (
	multiUser1 = "msg_1fed59bb2001eYGmY6tc91mheR"
	multiAsst1 = "msg_1fed5a730001XEXjFKDsbxeaHt"
	multiUser2 = "msg_1fed5d9330015rfaapLkhNIVDa"
	multiAsst2 = "msg_1fed5e506001uob7bfldp5qKss"
	// goneID is a message id in OpenCode's format that no row has: what
	// revert cleanup leaves in a later message's parentID (#38864).
	goneID = "msg_1fed5d000001GoneGoneGone01"
)

// post sends a JSON body to the server.
func post(ctx context.Context, srv *opencodetest.Server, path string, body any) (int, []byte) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, bytes.NewReader(b))
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// observation is what OpenCode does with one session, in words stable
// enough for a golden file.
type observation struct {
	lines []string
	l     *lab
}

func (o *observation) add(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	line = strings.ReplaceAll(line, o.l.e.ProjectDir, "<project>")
	line = errRefRe.ReplaceAllString(line, "err_…")
	o.lines = append(o.lines, line)
}

var errRefRe = regexp.MustCompile(`err_[0-9a-f]{8}`)

func (o *observation) String() string { return strings.Join(o.lines, "\n") + "\n" }

// listed says whether `opencode session list --format json`, run in the
// project directory, lists the session.
func (l *lab) listed(ctx context.Context, id string) string {
	l.t.Helper()
	res, err := l.e.Run(ctx, "session", "list", "--format", "json")
	if err != nil {
		l.t.Fatal(err)
	}
	if res.ExitCode != 0 {
		return fmt.Sprintf("exit %d: %s", res.ExitCode, firstLine(res.Stderr+res.Stdout))
	}
	var list []struct{ ID string }
	if i := strings.Index(res.Stdout, "["); i >= 0 {
		_ = json.Unmarshal([]byte(res.Stdout[i:]), &list)
	}
	for _, s := range list {
		if s.ID == id {
			return "listed"
		}
	}
	return fmt.Sprintf("not in the list (%d others)", len(list))
}

// serverListed says whether the server's GET /session lists the session.
func serverListed(ctx context.Context, srv *opencodetest.Server, id string) string {
	code, body, err := srv.Get(ctx, "/session")
	if err != nil || code != 200 {
		return fmt.Sprintf("GET /session %d", code)
	}
	ids := gjson.GetBytes(body, "#.id").Array()
	for _, v := range ids {
		if v.Str == id {
			return "listed"
		}
	}
	return fmt.Sprintf("not in the list (%d others)", len(ids))
}

var ansiRe = regexp.MustCompile("\x1b\\[[0-9;]*m")

// lastLine is the last non-empty line of s, without terminal colours.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(ansiRe.ReplaceAllString(s, "")), "\n")
	return firstLine(lines[len(lines)-1])
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// exported runs `opencode export` and describes the outcome.
func (l *lab) exported(ctx context.Context, id string) string {
	res := l.export(ctx, id)
	if res.ExitCode != 0 {
		return fmt.Sprintf("exit %d: %s", res.ExitCode, firstLine(res.Stderr+res.Stdout))
	}
	i := strings.Index(res.Stdout, "{")
	if i < 0 {
		return "exit 0, no document"
	}
	doc := gjson.Parse(res.Stdout[i:])
	return fmt.Sprintf("exit 0, %d messages", len(doc.Get("messages").Array()))
}

// resumed resumes the session and describes the outcome: the exit code,
// the error event, and the mock's verdicts with the role of the first
// message of the first request.
func (l *lab) resumed(ctx context.Context, id string, extra ...string) string {
	before := len(l.e.Mock.Requests())
	res, err := l.e.Resume(ctx, id, "Please continue.", append([]string{"--print-logs", "--log-level", "WARN"}, extra...)...)
	if err != nil {
		l.t.Fatal(err)
	}
	var verdicts []string
	first := ""
	for _, r := range l.e.Mock.Requests()[before:] {
		if !r.Chat {
			continue
		}
		if first == "" && r.Parsed != nil && len(r.Parsed.Messages) > 0 {
			first = r.Parsed.Messages[0].Role
		}
		v := string(r.Verdict)
		if r.Error != "" {
			v += " (" + r.Error + ")"
		}
		verdicts = append(verdicts, v)
	}
	s := fmt.Sprintf("exit %d, %d chat requests", res.ExitCode, len(verdicts))
	if first != "" {
		s += ", the first request's history starts with " + first
	}
	if len(verdicts) > 0 {
		s += ": " + strings.Join(slices.Compact(verdicts), ", ")
	}
	e := runError(res)
	if e.name != "" {
		s += "; error " + e.String()
	}
	if m := regexp.MustCompile(`ref=` + regexp.QuoteMeta(e.ref) + ` error="((?:[^"\\]|\\.)*)"`).FindStringSubmatch(res.Stderr); e.ref != "" && m != nil {
		s += "; log: " + shortenLog(m[1])
	}
	if res.ExitCode != 0 && e.name == "" {
		s += "; " + firstLine(res.Stderr)
	}
	return s
}

// loads describes GET /session/:id/message.
func loads(ctx context.Context, srv *opencodetest.Server, id string) string {
	code, body, err := srv.SessionMessages(ctx, id)
	if err != nil {
		return err.Error()
	}
	v, _ := verdict(code, body)
	if code == 200 {
		v += fmt.Sprintf(", %d messages", len(gjson.ParseBytes(body).Array()))
	}
	return v
}

// setKey sets (or with value nil, deletes) a key of a row's data.
func (l *lab) setKey(table, id, path string, value any) {
	l.t.Helper()
	var data string
	if err := l.db.QueryRow(`SELECT data FROM `+table+` WHERE id = ?`, id).Scan(&data); err != nil {
		l.t.Fatal(err)
	}
	var err error
	if value == nil {
		data, err = sjson.Delete(data, path)
	} else {
		data, err = sjson.Set(data, path, value)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	l.setData(table, id, data)
}

// graphMissingParent: an assistant message whose parentID names a
// message that no longer exists (#38864, left by revert cleanup). Repair:
// point it at the closest user message before it.
func graphMissingParent(t *testing.T) {
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	o := &observation{l: l}
	srv := l.serve(ctx)
	l.setKey("message", multiAsst2, "parentID", goneID)
	o.add("broken: the second assistant message's parentID names %s, which no row has", goneID)
	o.add("  GET /session/:id/message: %s", loads(ctx, srv, realMulti))
	code, body, _ := srv.Get(ctx, "/session/"+realMulti+"/message/"+multiAsst2)
	v, _ := verdict(code, body)
	o.add("  GET /session/:id/message/:child: %s", v)
	o.add("  opencode export: %s", l.exported(ctx, realMulti))
	code, body = post(ctx, srv, "/session/"+realMulti+"/revert", map[string]string{"messageID": multiAsst2})
	v, _ = verdict(code, body)
	o.add("  POST /session/:id/revert {messageID: child}: %s", v)
	code, body = post(ctx, srv, "/session/"+realMulti+"/unrevert", nil)
	v, _ = verdict(code, body)
	o.add("  POST /session/:id/unrevert: %s", v)
	o.add("  opencode run --session: %s", l.resumed(ctx, realMulti))
	o.add("  GET /session/:id/message after the resume: %s", loads(ctx, srv, realMulti))
	l.setKey("message", multiAsst2, "parentID", multiUser2)
	o.add("repaired: parentID set to the closest user message before it (%s)", multiUser2)
	o.add("  GET /session/:id/message: %s", want(t, "GET after the repair", loads(ctx, srv, realMulti), "200"))
	o.add("  opencode run --session: %s", want(t, "resume after the repair", l.resumed(ctx, realMulti), resumeOK))
	goldenFile(t, "graph-missing-parent", o.String())
}

// graphAssistantFirst: a history that begins with an assistant
// message (#31048), made by deleting the first user message and its parts.
// sessfix reports it and invents nothing; this records what OpenCode and
// the mock do with it.
func graphAssistantFirst(t *testing.T) {
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	o := &observation{l: l}
	srv := l.serve(ctx)
	l.exec(`DELETE FROM part WHERE message_id = ?`, multiUser1)
	l.exec(`DELETE FROM message WHERE id = ?`, multiUser1)
	o.add("broken: the first user message and its parts deleted; the history starts with an assistant message whose parentID names the deleted message")
	o.add("  GET /session/:id/message: %s", loads(ctx, srv, realMulti))
	o.add("  opencode export: %s", l.exported(ctx, realMulti))
	o.add("  opencode run --session: %s", l.resumed(ctx, realMulti))
	goldenFile(t, "graph-assistant-first", o.String())
}

// unknownModel: a session whose stored model is not in the user's config
// any more (#42781: "exits silently"). set breaks the session row's model
// or the messages'; repair, when set, is the fix proven after the break.
func unknownModel(name, golden string, set func(l *lab), repair func(l *lab), repairName string) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := labCtx(t)
		l := newLab(t, opencodetest.Options{})
		o := &observation{l: l}
		set(l)
		o.add("broken: %s", name)
		o.add("  opencode run --session: %s", l.resumed(ctx, realPlain))
		if repair != nil {
			o.add("  opencode run --session --model %s: %s", opencodetest.DefaultModel, l.resumed(ctx, realPlain, "--model", opencodetest.DefaultModel))
			repair(l)
			o.add("repaired: %s", repairName)
			o.add("  opencode run --session: %s", want(t, "resume after the repair", l.resumed(ctx, realPlain), resumeOK))
		}
		goldenFile(t, golden, o.String())
	}
}

// Ids of the recorded plain session.
const (
	plainUser = "msg_1fed5361d001QlOpfHagQSBZKN"
	plainAsst = "msg_1fed5416d001xO9zyvrPKgrNA5"
)

// rekey gives a part a new id that sorts where the old one did: the same
// time digits, another random tail.
func rekey(id string) string { return id[:16] + "Rekeyed0000001" }

// graphDuplicateIDs: a message id twice in an export, and one part id
// under two messages in an export (the first assistant message's text part
// carrying the id of the second one's), each given to `opencode import`.
// Repair: re-key the duplicate with an id that sorts where it was.
func graphDuplicateIDs(t *testing.T) {
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	res := l.export(ctx, realMulti)
	i := strings.Index(res.Stdout, "{")
	if res.ExitCode != 0 || i < 0 {
		t.Fatalf("export:\n%s", res)
	}
	healthy := res.Stdout[i:]
	o := &observation{l: l}
	var last string
	importCase := func(name, doc string, resume bool) {
		// The home loses the session first, so the import is its only source.
		l.exec(`DELETE FROM part WHERE session_id = ?`, realMulti)
		l.exec(`DELETE FROM message WHERE session_id = ?`, realMulti)
		l.exec(`DELETE FROM session WHERE id = ?`, realMulti)
		file := filepath.Join(l.e.Root, "export.json")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := l.e.Run(ctx, "import", file)
		if err != nil {
			t.Fatal(err)
		}
		o.add("%s", name)
		o.add("  opencode import: exit %d %s", res.ExitCode, firstLine(res.Stderr))
		var msgs, parts int
		_ = l.db.QueryRow(`SELECT count(*) FROM message WHERE session_id = ?`, realMulti).Scan(&msgs)
		_ = l.db.QueryRow(`SELECT count(*) FROM part WHERE session_id = ?`, realMulti).Scan(&parts)
		o.add("  rows after the import: %d messages, %d parts", msgs, parts)
		if resume {
			o.add("  opencode run --session: %s", l.resumed(ctx, realMulti))
		}
		last = o.lines[len(o.lines)-1]
	}
	doc := gjson.Parse(healthy)
	msgs := doc.Get("messages").Array()
	o.add("healthy export: %d messages, %d parts", len(msgs), len(doc.Get("messages.#.parts|@flatten").Array()))

	dup, _ := sjson.SetRaw(healthy, "messages.-1", msgs[3].Raw)
	importCase("an export with the last assistant message twice (same id, same content)", dup, false)

	textIdx := func(m gjson.Result) int {
		for k, p := range m.Get("parts").Array() {
			if p.Get("type").Str == "text" {
				return k
			}
		}
		t.Fatal("no text part")
		return 0
	}
	first, second := textIdx(msgs[1]), textIdx(msgs[3])
	firstID := msgs[1].Get(fmt.Sprintf("parts.%d.id", first)).Str
	secondID := msgs[3].Get(fmt.Sprintf("parts.%d.id", second)).Str
	clash, _ := sjson.Set(healthy, fmt.Sprintf("messages.1.parts.%d.id", first), secondID)
	importCase("an export with one part id under two messages (the first assistant message's text part carries the second one's id)", clash, true)
	var owner string
	_ = l.db.QueryRow(`SELECT message_id FROM part WHERE id = ?`, secondID).Scan(&owner)
	o.add("  the part row %s belongs to %s", "<shared id>", map[string]string{
		msgs[1].Get("info.id").Str: "the first assistant message (the second one lost its text)",
		msgs[3].Get("info.id").Str: "the second assistant message (the first one lost its text)",
	}[owner])
	fixed, _ := sjson.Set(healthy, fmt.Sprintf("messages.1.parts.%d.id", first), rekey(firstID))
	importCase("repaired: the first assistant message's text part re-keyed with an id that sorts where it was", fixed, true)
	want(t, "resume of the re-keyed import", last, resumeOK)
	goldenFile(t, "graph-duplicate-ids", o.String())
}

// graphDuplicatePart11: one part id under two messages in the JSON
// storage tree of OpenCode 1.1.65 (part/<msgA>/<prt>.json and
// part/<msgB>/<prt>.json), which SQLite's primary key rules out.
func graphDuplicatePart11(t *testing.T) {
	ctx := labCtx(t)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_1})
	root, _ := opencodetest.RepoRoot()
	if err := e.LoadData(filepath.Join(root, "testdata", "real", "opencode-"+opencodetest.V1_1)); err != nil {
		t.Fatal(err)
	}
	ids, _ := opencodetest.Sessions(e.DataDir())
	var session string
	var msgs []opencodetest.Message
	for _, id := range ids {
		m, _ := opencodetest.LoadSession(e.DataDir(), id)
		if len(m) == 4 {
			session, msgs = id, m
		}
	}
	if session == "" {
		t.Fatal("no multi-turn session in the 1.1.65 recording")
	}
	text := func(m opencodetest.Message) opencodetest.Part {
		for _, p := range m.Parts {
			if p.Type() == "text" {
				return p
			}
		}
		t.Fatal("no text part")
		return opencodetest.Part{}
	}
	first, second := text(msgs[1]), text(msgs[3])
	dir := filepath.Join(e.StorageDir(), "part", msgs[1].ID)
	move := func(from, to string) {
		b, err := os.ReadFile(filepath.Join(dir, from+".json"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ = sjson.SetBytes(b, "id", to)
		if err := os.WriteFile(filepath.Join(dir, to+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, from+".json")); err != nil {
			t.Fatal(err)
		}
	}
	observe := func(name string) string {
		s := []string{name}
		res, err := e.Run(ctx, "export", session)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(res.Stdout, "{"); res.ExitCode == 0 && i >= 0 {
			doc := gjson.Parse(res.Stdout[i:])
			var texts []string
			for _, m := range doc.Get("messages").Array() {
				for _, p := range m.Get("parts").Array() {
					if p.Get("id").Str == second.ID {
						texts = append(texts, fmt.Sprintf("%.30q", p.Get("text").Str))
					}
				}
			}
			s = append(s, fmt.Sprintf("  opencode export: exit 0, parts with the shared id: %s", strings.Join(texts, ", ")))
		} else {
			s = append(s, fmt.Sprintf("  opencode export: exit %d %s", res.ExitCode, firstLine(res.Stderr)))
		}
		before := len(e.Mock.Requests())
		run, err := e.Resume(ctx, session, "Please continue.")
		if err != nil {
			t.Fatal(err)
		}
		var v []string
		for _, r := range e.Mock.Requests()[before:] {
			if r.Chat {
				v = append(v, strings.TrimSpace(string(r.Verdict)+" "+r.Error))
			}
		}
		s = append(s, fmt.Sprintf("  opencode run --session: exit %d, chat requests %q", run.ExitCode, v))
		return strings.Join(s, "\n") + "\n"
	}
	move(first.ID, second.ID)
	out := observe("1.1.65 storage: the first assistant message's text part file renamed to the id of the second one's (one part id under two messages)")
	// The same tree given to 1.18.33 (which reads only SQLite).
	e18 := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18})
	if err := opencodetest.CopyTree(e.StorageDir(), e18.StorageDir()); err != nil {
		t.Fatal(err)
	}
	res, err := e18.Run(ctx, "export", session)
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(res.Stdout, "{"); res.ExitCode == 0 && i >= 0 {
		doc := gjson.Parse(res.Stdout[i:])
		var where []string
		for k, m := range doc.Get("messages").Array() {
			for _, p := range m.Get("parts").Array() {
				if p.Get("id").Str == second.ID {
					where = append(where, fmt.Sprintf("message %d", k))
				}
			}
		}
		out += fmt.Sprintf("  the same tree migrated by OpenCode %s (opencode export): exit 0, the shared id survives once, under %s\n", opencodetest.V1_18, strings.Join(where, ", "))
	} else {
		out += fmt.Sprintf("  the same tree given to OpenCode %s (opencode export): exit %d, %s\n", opencodetest.V1_18, res.ExitCode, lastLine(res.Stderr))
	}
	move(second.ID, rekey(first.ID))
	out += observe("repaired: re-keyed with an id that sorts where it was (new file name and id)")
	golden(t, "graph-duplicate-part-"+opencodetest.V1_1+".golden", []byte(strings.ReplaceAll(out, second.ID, "<shared id>")))
}

// graphMissingProject: a session whose project_id names no project row.
// Repair: point the session at the project OpenCode resolves for its
// directory.
func graphMissingProject(t *testing.T) {
	ctx := labCtx(t)
	l := newLab(t, opencodetest.Options{})
	o := &observation{l: l}
	l.exec(`UPDATE session SET project_id = 'a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9' WHERE id = ?`, realPlain)
	o.add("broken: project_id names a project row that does not exist (non-git directory, resolves to project global)")
	srv := l.serve(ctx)
	o.add("  GET /session (server): %s", serverListed(ctx, srv, realPlain))
	o.add("  GET /session/:id/message: %s", loads(ctx, srv, realPlain))
	srv.Kill()
	o.add("  opencode session list: %s", l.listed(ctx, realPlain))
	o.add("  opencode export: %s", l.exported(ctx, realPlain))
	o.add("  opencode run --session: %s", l.resumed(ctx, realPlain))
	l.exec(`UPDATE session SET project_id = 'global' WHERE id = ?`, realPlain)
	o.add("repaired: project_id set to global, the project OpenCode resolves for the directory")
	o.add("  opencode session list: %s", want(t, "list after the repair", l.listed(ctx, realPlain), "listed"))
	o.add("  opencode run --session: %s", want(t, "resume after the repair", l.resumed(ctx, realPlain), resumeOK))
	goldenFile(t, "graph-missing-project", o.String())
}

// graphShadowProject: a session moved to a second project row for the same
// directory, which shadows the one OpenCode resolves (#8661, #36464).
// Repair: point the session at the project OpenCode resolves.
func graphShadowProject(t *testing.T) {
	ctx := labCtx(t)
	// A git directory: OpenCode keys its project by the repository's first
	// commit. The session is moved to a second project row with the same
	// worktree, which shadows the real one.
	l := newLab(t, opencodetest.Options{})
	o := &observation{l: l}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = l.e.ProjectDir
		cmd.Env = l.e.Environ()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "init")
	o.add("setup: the project directory made a git repository with one commit")
	o.add("  opencode session list: %s", l.listed(ctx, realPlain))
	var projects []string
	rows, _ := l.db.Query(`SELECT id || ' ' || worktree FROM project ORDER BY time_created`)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		projects = append(projects, s)
	}
	rows.Close()
	var real, sessionProject string
	_ = l.db.QueryRow(`SELECT id FROM project WHERE worktree = ?`, l.e.ProjectDir).Scan(&real)
	_ = l.db.QueryRow(`SELECT project_id FROM session WHERE id = ?`, realPlain).Scan(&sessionProject)
	o.add("  project rows: %d; the session's project is %s", len(projects), projectName(sessionProject, real))
	if real == "" {
		t.Fatalf("OpenCode made no project row for the git directory: %v", projects)
	}
	shadow := "b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0"
	l.exec(`INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) SELECT ?, worktree, vcs, time_created, time_updated, sandboxes FROM project WHERE id = ?`, shadow, real)
	l.exec(`UPDATE session SET project_id = ? WHERE id = ?`, shadow, realPlain)
	o.add("broken: a second project row for the same worktree, and the session moved to it")
	srv := l.serve(ctx)
	o.add("  GET /session (server): %s", serverListed(ctx, srv, realPlain))
	o.add("  GET /session/:id/message: %s", loads(ctx, srv, realPlain))
	srv.Kill()
	o.add("  opencode session list: %s", l.listed(ctx, realPlain))
	o.add("  opencode run --session: %s", l.resumed(ctx, realPlain))
	l.exec(`UPDATE session SET project_id = ? WHERE id = ?`, real, realPlain)
	o.add("repaired: the session pointed at the project row OpenCode resolves for the directory (the repository's first commit)")
	o.add("  opencode session list: %s", want(t, "list after the repair", l.listed(ctx, realPlain), "listed"))
	goldenFile(t, "graph-shadow-project", strings.ReplaceAll(strings.ReplaceAll(o.String(), real, "<commit>"), shadow, "<shadow>"))
}

func projectName(id, real string) string {
	switch id {
	case real:
		return "the git project (<commit>)"
	case "global":
		return "global"
	}
	return id
}

// want fails the test unless got contains sub: the claims each
// experiment's repair rests on, beyond the golden file.
func want(t *testing.T, what, got, sub string) string {
	t.Helper()
	if !strings.Contains(got, sub) {
		t.Errorf("%s: %q, want %q in it", what, got, sub)
	}
	return got
}

const resumeOK = "exit 0, 1 chat requests, the first request's history starts with user: accepted"

// goldenFile checks an experiment's observation against
// testdata/<name>-1.18.33.golden.
func goldenFile(t *testing.T, name, text string) {
	t.Helper()
	golden(t, name+"-"+opencodetest.V1_18+".golden", []byte(text))
}

// TestGraph runs the session-graph experiments on real OpenCode, three at
// a time (each in its own home): OpenCode spends most of each command
// starting up and waiting, so they overlap well on two cores; more at once
// made `opencode serve` and `opencode run` stall past their timeouts. Each
// records OpenCode's behaviour, broken and repaired, in
// testdata/graph-*.golden.
func TestGraph(t *testing.T) {
	t.Parallel()
	retire := func(column, value string) func(l *lab) {
		return func(l *lab) {
			l.exec(`UPDATE session SET model = json_set(model, '$.`+column+`', ?) WHERE id = ?`, value, realPlain)
		}
	}
	experiments := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"missing-parent", graphMissingParent},
		{"assistant-first", graphAssistantFirst},
		{"unknown-model", unknownModel("the session row's model names a model the provider does not have", "graph-unknown-model",
			retire("id", "claude-retired-1"), retire("id", "claude-sonnet-4-5"),
			"the session row's model set to the configured "+opencodetest.DefaultModel+" (messages untouched)")},
		{"unknown-provider", unknownModel("the session row's model names a provider the config does not have", "graph-unknown-provider",
			retire("providerID", "retired-provider"), nil, "")},
		{"messages-unknown-provider", unknownModel("the messages' models name a provider the config does not have (the session row's is fine)",
			"graph-messages-unknown-provider", func(l *lab) {
				l.setKey("message", plainUser, "model.providerID", "retired-provider")
				l.setKey("message", plainAsst, "providerID", "retired-provider")
			}, nil, "")},
		{"duplicate-ids", graphDuplicateIDs},
		{"duplicate-part-1.1", graphDuplicatePart11},
		{"missing-project", graphMissingProject},
		{"shadow-project", graphShadowProject},
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, 3)
	for _, x := range experiments {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(x.name, x.run)
		}()
	}
	wg.Wait()
}

// shortenLog keeps the head and the root cause of a long logged error: the
// middle holds queries with times and paths of the run.
func shortenLog(s string) string {
	if len(s) <= 200 {
		return s
	}
	tail := s[len(s)-80:]
	if i := strings.LastIndex(s, "(cause: "); i >= 0 {
		tail = strings.TrimRight(s[i+len("(cause: "):], ")]")
		if j := strings.LastIndex(tail, "(cause: "); j >= 0 {
			tail = strings.TrimRight(tail[j+len("(cause: "):], ")]")
		}
	}
	return s[:60] + " … " + tail
}
