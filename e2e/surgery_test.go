//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// TestRealSurgery proves `sessfix drop` and `sessfix rewind` on real
// OpenCode data (1.18.33's database, 1.1.65's storage/ tree), on the base's
// two-turn session (user, assistant with a tool call, assistant, user,
// assistant):
//   - `undo --last` restores the whole store (storeState) exactly, and the
//     same cut again leaves the same store;
//   - after the cut the session keeps exactly the messages it should;
//     OpenCode's server lists it, `opencode export` prints it with those
//     messages, and `opencode run --session` resumes it: the strict mock
//     accepts the request, which holds exactly what `sessfix show --sent`
//     said it would (the kept history and the new prompt), the prompts of
//     the cut messages nowhere.
func TestRealSurgery(t *testing.T) {
	parallel(t)
	cuts := []struct {
		name string
		// args are the cut's arguments after the session id; kept the
		// messages left, by position in the base session.
		args func(c *caseRun) []string
		kept []int
		// gone is the prompt that must not be sent again.
		gone string
	}{
		{"rewind", func(c *caseRun) []string { return []string{"--to", c.assistant(1).ID} }, []int{0, 1, 2}, promptSecond},
		{"drop", func(c *caseRun) []string { return []string{c.user(0).ID} }, []int{3, 4}, promptLoop},
	}
	for _, version := range versions {
		for _, cut := range cuts {
			t.Run(version+"/"+cut.name, func(t *testing.T) {
				t.Parallel()
				b, c := onBase(t, version)
				e, d := c.e, c.d
				if len(c.msgs) != 5 {
					t.Fatalf("the base session has %d messages, want 5", len(c.msgs))
				}
				var want []string
				for _, i := range cut.kept {
					want = append(want, c.msgs[i].ID)
				}
				args := append([]string{cut.name, b.loop}, cut.args(c)...)
				args = append(args, "--yes") // a finished turn: cut at once, no --settle

				before := storeState(t, d)
				if res := sessfix(t, e, args...); res.ExitCode != 0 {
					t.Fatalf("%s", res)
				}
				cutState := storeState(t, d)
				if cutState == before {
					t.Fatal("the cut changed nothing")
				}
				if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
					t.Fatalf("undo --last:\n%s", res)
				}
				if got := storeState(t, d); got != before {
					t.Fatalf("undo did not restore the store exactly:\nbefore %s\nafter  %s", before, got)
				}
				if res := sessfix(t, e, args...); res.ExitCode != 0 {
					t.Fatalf("the cut again:\n%s", res)
				}
				if got := storeState(t, d); got != cutState {
					t.Fatalf("the same cut left another store:\nfirst %s\nagain %s", cutState, got)
				}
				kept := d.session(b.loop)
				var ids []string
				for _, m := range kept {
					ids = append(ids, m.ID)
				}
				if !slices.Equal(ids, want) {
					t.Fatalf("messages after the cut %v, want %v", ids, want)
				}
				sent := showSent(t, e, b.loop)

				ctx := testCtx(t, 4*time.Minute)
				if got := listedByServer(ctx, t, e, b.loop); got != "listed" {
					t.Errorf("OpenCode's GET /session after the cut: %s", got)
				}
				doc, res, err := e.Export(ctx, b.loop)
				if err != nil {
					t.Fatalf("opencode export after the cut: %v\n%s", err, res)
				}
				var exp exportDoc
				if err := json.Unmarshal(doc, &exp); err != nil || len(exp.Messages) != len(want) {
					t.Errorf("opencode export holds %d messages (%v), want %d", len(exp.Messages), err, len(want))
				}

				const prompt = "After the cut: what is left?"
				texts := resumeSent(c, prompt, sent)
				// The new prompt as OpenCode stored it (quoted by the shell
				// wrapper), after exactly the kept messages.
				after := d.session(b.loop)
				if len(after) <= len(kept) || after[len(kept)].Role() != "user" {
					t.Fatalf("the resumed session holds %d messages; the new prompt should follow the %d kept", len(after), len(kept))
				}
				for i, m := range kept {
					if after[i].ID != m.ID {
						t.Errorf("message %d is %s after the resume, was %s", i, after[i].ID, m.ID)
					}
				}
				wantTexts := append(userTexts(kept), userTexts(after[len(kept):len(kept)+1])...)
				if !slices.Equal(texts, wantTexts) || !strings.Contains(texts[len(texts)-1], prompt) {
					t.Errorf("the user texts sent are %q, want exactly the kept ones %q", texts, wantTexts)
				}
				if slices.Contains(texts, cut.gone) {
					t.Errorf("the cut prompt %q was sent again", cut.gone)
				}
			})
		}
	}
}

// resumeSent resumes c's session with prompt and returns the user texts
// of the request the strict mock accepted, which must hold as many messages
// as `sessfix show --sent` said (sent).
func resumeSent(c *caseRun, prompt string, sent *sentDoc) []string {
	t := c.t
	t.Helper()
	if v := c.resume(prompt); v.State != "accepted" {
		t.Fatalf("resume of %s: %s", c.session, v)
	}
	chat := c.e.Mock.ChatRequests()
	if len(chat) == 0 {
		t.Fatal("the mock got no request")
	}
	r := chat[0].Parsed
	if len(r.Messages) != len(sent.Request.Messages) {
		t.Errorf("OpenCode sent %d messages, sessfix show --sent said %d", len(r.Messages), len(sent.Request.Messages))
	}
	var texts []string
	for _, m := range r.Messages {
		for _, bl := range m.Content {
			if m.Role == "user" && bl.Type == "text" {
				texts = append(texts, bl.Text)
			}
		}
	}
	return texts
}

// listedByServer says whether `opencode serve`'s GET /session lists the
// session.
func listedByServer(ctx context.Context, t *testing.T, e *opencodetest.Env, id string) string {
	t.Helper()
	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	defer srv.Kill()
	code, body, err := srv.Get(ctx, "/session")
	if err != nil || code != 200 {
		return "GET /session failed"
	}
	for _, v := range gjson.GetBytes(body, "#.id").Array() {
		if v.Str == id {
			return "listed"
		}
	}
	return "not listed"
}

// newSessionRe finds the new session `sessfix fork` names.
var newSessionRe = regexp.MustCompile(`(?m)^new session (ses_[0-9a-zA-Z]+) `)

// TestRealFork proves `sessfix fork` on real OpenCode data (1.18.33's
// database, 1.1.65's storage/ tree), on the base's two-turn session, copied
// whole and up to its first answer:
//   - `undo --last` restores the whole store (storeState) exactly;
//   - the original session keeps every byte;
//   - the new session holds copies of exactly the messages asked for, with
//     new ids; OpenCode's server lists it, `opencode export` prints it with
//     those messages, and `opencode run --session NEW` resumes it: the
//     strict mock accepts the request, which holds exactly what `sessfix
//     show --sent` said it would (the copied history and the new prompt),
//     the prompts not copied nowhere.
func TestRealFork(t *testing.T) {
	parallel(t)
	forks := []struct {
		name string
		// args are fork's arguments after the session id; kept the messages
		// copied, by position in the base session.
		args func(c *caseRun) []string
		kept []int
		// gone is a prompt that must not be sent, if any; title the fork's
		// title (empty: the original's with " (fork #1)").
		gone, title string
	}{
		{"whole", func(*caseRun) []string { return nil }, []int{0, 1, 2, 3, 4}, "", ""},
		{"to", func(c *caseRun) []string {
			return []string{"--to", c.assistant(1).ID, "--title", "up to the first answer"}
		}, []int{0, 1, 2}, promptSecond, "up to the first answer"},
	}
	for _, version := range versions {
		for _, fk := range forks {
			t.Run(version+"/"+fk.name, func(t *testing.T) {
				t.Parallel()
				b, c := onBase(t, version)
				e, d := c.e, c.d
				if len(c.msgs) != 5 {
					t.Fatalf("the base session has %d messages, want 5", len(c.msgs))
				}
				var kept []opencodetest.Message
				for _, i := range fk.kept {
					kept = append(kept, c.msgs[i])
				}
				args := append(append([]string{"fork", b.loop}, fk.args(c)...), "--yes")
				before, original := storeState(t, d), sessionBytes(t, d, b.loop)
				fork := func() string {
					t.Helper()
					res := sessfix(t, e, args...)
					m := newSessionRe.FindStringSubmatch(res.Stderr)
					if res.ExitCode != 0 || m == nil {
						t.Fatalf("%s", res)
					}
					return m[1]
				}
				first := fork()
				if storeState(t, d) == before {
					t.Fatal("the fork changed nothing")
				}
				if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
					t.Fatalf("undo --last:\n%s", res)
				}
				if got := storeState(t, d); got != before {
					t.Fatalf("undo did not restore the store exactly:\nbefore %s\nafter  %s", before, got)
				}
				if n := len(d.session(first)); n != 0 {
					t.Fatalf("the undone fork %s still holds %d messages", first, n)
				}
				id := fork()
				if sessionBytes(t, d, b.loop) != original {
					t.Fatal("the fork changed the original session")
				}
				checkFork(c, id, kept, fk.title, fk.gone)
				if sessionBytes(t, d, b.loop) != original {
					t.Error("resuming the fork changed the original session")
				}
			})
		}
	}
}

// checkFork checks the fork id of c's session holds copies of exactly the
// kept messages, titled title (empty: the original's with " (fork #1)"),
// and that real OpenCode takes it as its own: its server lists it, `opencode
// export` prints it with every reference inside it, and `opencode run
// --session` resumes it: the strict mock accepts a request holding exactly
// the copied prompts and the new one, as `sessfix show --sent` said, and
// not gone.
func checkFork(c *caseRun, id string, kept []opencodetest.Message, title, gone string) {
	t, e, d := c.t, c.e, c.d
	t.Helper()
	forked := d.session(id)
	if len(forked) != len(kept) {
		t.Fatalf("the fork holds %d messages, want %d", len(forked), len(kept))
	}
	for i, m := range forked {
		if m.ID == kept[i].ID || m.Role() != kept[i].Role() || len(m.Parts) != len(kept[i].Parts) {
			t.Errorf("message %d of the fork: %s %s with %d parts; original %s %s with %d parts",
				i, m.Role(), m.ID, len(m.Parts), kept[i].Role(), kept[i].ID, len(kept[i].Parts))
		}
	}
	if !slices.Equal(userTexts(forked), userTexts(kept)) {
		t.Errorf("the fork's user texts %q, want the originals' %q", userTexts(forked), userTexts(kept))
	}
	sent := showSent(t, e, id)

	ctx := testCtx(t, 4*time.Minute)
	if got := listedByServer(ctx, t, e, id); got != "listed" {
		t.Errorf("OpenCode's GET /session after the fork: %s", got)
	}
	doc, res, err := e.Export(ctx, id)
	if err != nil {
		t.Fatalf("opencode export of the fork: %v\n%s", err, res)
	}
	var exp exportDoc
	if err := json.Unmarshal(doc, &exp); err != nil || len(exp.Messages) != len(kept) {
		t.Errorf("opencode export holds %d messages (%v), want %d", len(exp.Messages), err, len(kept))
	}
	// OpenCode's own view of the fork: its title, and every
	// reference inside it.
	if got := gjson.GetBytes(doc, "info.title").Str; got != title && !(title == "" && strings.HasSuffix(got, " (fork #1)")) {
		t.Errorf("opencode export titles the fork %q", got)
	}
	ids := map[string]bool{}
	for _, m := range gjson.GetBytes(doc, "messages.#.info").Array() {
		ids[m.Get("id").Str] = true
	}
	for _, m := range gjson.GetBytes(doc, "messages").Array() {
		if ses := m.Get("info.sessionID").Str; ses != id {
			t.Errorf("message %s of the fork names session %s", m.Get("info.id").Str, ses)
		}
		if parent := m.Get("info.parentID").Str; parent != "" && !ids[parent] {
			t.Errorf("message %s of the fork answers %s, not a message of the fork", m.Get("info.id").Str, parent)
		}
		for _, p := range m.Get("parts").Array() {
			if p.Get("sessionID").Str != id || p.Get("messageID").Str != m.Get("info.id").Str {
				t.Errorf("part %s of the fork names session %s and message %s", p.Get("id").Str, p.Get("sessionID").Str, p.Get("messageID").Str)
			}
		}
	}

	const prompt = "On the fork: what do you remember?"
	texts := resumeSent(&caseRun{t: t, version: c.version, e: e, d: d, session: id, msgs: forked}, prompt, sent)
	after := d.session(id)
	if len(after) <= len(kept) || after[len(kept)].Role() != "user" {
		t.Fatalf("the resumed fork holds %d messages; the new prompt should follow the %d copied", len(after), len(kept))
	}
	wantTexts := append(userTexts(kept), userTexts(after[len(kept):len(kept)+1])...)
	if !slices.Equal(texts, wantTexts) || !strings.Contains(texts[len(texts)-1], prompt) {
		t.Errorf("the user texts sent are %q, want exactly the copied ones %q", texts, wantTexts)
	}
	if gone != "" && slices.Contains(texts, gone) {
		t.Errorf("the prompt not copied %q was sent", gone)
	}
}

// writtenRe finds the export file `sessfix fork` wrote.
var writtenRe = regexp.MustCompile(`(?m)^written to (\S+); import it with`)

// TestRealForkExport forks a session as real OpenCode exported it: the fork
// is a new export file next to the original, which keeps every byte; undo
// removes the new file; `opencode import` of it gives a session OpenCode
// lists, exports and resumes with exactly the copied history (checkFork).
func TestRealForkExport(t *testing.T) {
	parallel(t)
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			b, c := onBase(t, version)
			e := c.e
			ctx := testCtx(t, 4*time.Minute)
			doc, res, err := e.Export(ctx, b.loop)
			if err != nil {
				t.Fatalf("opencode export: %v\n%s", err, res)
			}
			path := filepath.Join(t.TempDir(), "session.json")
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			fork := func() (id, file string) {
				t.Helper()
				res := sessfix(t, e, "fork", b.loop, "--to", c.assistant(1).ID, "--store", path, "--yes")
				m, w := newSessionRe.FindStringSubmatch(res.Stderr), writtenRe.FindStringSubmatch(res.Stderr)
				if res.ExitCode != 0 || m == nil || w == nil {
					t.Fatalf("%s", res)
				}
				return m[1], w[1]
			}
			unchanged := func(when string) {
				t.Helper()
				if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, doc) {
					t.Fatalf("%s, the original export file changed (%v)", when, err)
				}
			}
			_, first := fork()
			unchanged("after the fork")
			if res := sessfix(t, e, "undo", "--last"); res.ExitCode != 0 {
				t.Fatalf("undo --last:\n%s", res)
			}
			if _, err := os.Stat(first); !os.IsNotExist(err) {
				t.Fatalf("undo left the fork's file %s (%v)", first, err)
			}
			unchanged("after the undo")
			id, file := fork()
			if res, err := e.Run(ctx, "import", file); err != nil || res.ExitCode != 0 {
				t.Fatalf("opencode import %s: %v\n%s", file, err, res)
			}
			checkFork(c, id, c.msgs[:3], "", promptSecond)
			unchanged("after the resume")
		})
	}
}
