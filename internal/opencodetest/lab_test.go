//go:build acceptance

package opencodetest_test

import (
	"context"
	"database/sql"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/pkg/ocschema"
)

// update rewrites the golden files of the experiments in this package.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from this run")

// Sessions of testdata/real/opencode-1.18.33 (see its README).
const (
	realPlain = "ses_e012acd97ffeUavLGQWWTi4jHW" // user, assistant (reasoning, text)
	realLoop  = "ses_e012a9fbfffeKtIFkrDCzeMk55" // user, assistant (tool), assistant (text)
	realMulti = "ses_e012a6510ffemP4Gukdz1ZnYpe" // two turns
)

// lab is a real OpenCode 1.18.33 home holding a copy of the recorded store
// testdata/real/opencode-1.18.33, whose sessions are moved into the home's
// project directory so that they can be resumed there.
type lab struct {
	t  *testing.T
	e  *opencodetest.Env
	db *sql.DB
}

func labCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newLab(t *testing.T, opts opencodetest.Options) *lab {
	t.Helper()
	return newLabFrom(t, opts, "opencode-"+opencodetest.V1_18)
}

// newLabFrom is newLab with another recorded store of testdata/real.
func newLabFrom(t *testing.T, opts opencodetest.Options, store string) *lab {
	t.Helper()
	opts.Version = opencodetest.V1_18
	if opts.Timeout == 0 {
		// A lab's `opencode serve` lives as long as its experiment, which
		// runs several commands on a loaded machine.
		opts.Timeout = 5 * time.Minute
	}
	e := opencodetest.NewT(t, opts)
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.LoadData(filepath.Join(root, "testdata", "real", store)); err != nil {
		t.Fatal(err)
	}
	db, err := opencodetest.OpenDB(e.DBPath())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	l := &lab{t: t, e: e, db: db}
	// OpenCode 1.18 runs a resumed session in its recorded directory, and
	// the session's path is that directory relative to the project's
	// worktree ("/" for the global project).
	l.exec(`UPDATE session SET directory = ?, path = ?`, e.ProjectDir, strings.TrimPrefix(e.ProjectDir, "/"))
	return l
}

func (l *lab) exec(q string, args ...any) {
	l.t.Helper()
	if _, err := l.db.Exec(q, args...); err != nil {
		l.t.Fatalf("%s: %v", q, err)
	}
}

func (l *lab) setData(table, id, data string) {
	l.t.Helper()
	l.exec(`UPDATE `+table+` SET data = ? WHERE id = ?`, data, id)
}

// rows loads a session's messages and parts in OpenCode's order, with the
// row times SessionContexts needs.
func (l *lab) rows(sessionID string) []ocschema.MessageRow {
	l.t.Helper()
	q := func(query string, args ...any) []ocschema.Row {
		rs, err := l.db.Query(query, args...)
		if err != nil {
			l.t.Fatal(err)
		}
		defer rs.Close()
		var out []ocschema.Row
		for rs.Next() {
			var r ocschema.Row
			var body string
			if err := rs.Scan(&r.ID, &r.Created, &body); err != nil {
				l.t.Fatal(err)
			}
			r.Body = []byte(body)
			out = append(out, r)
		}
		return out
	}
	var msgs []ocschema.MessageRow
	for _, m := range q(`SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id`, sessionID) {
		msgs = append(msgs, ocschema.MessageRow{Row: m, Parts: q(`SELECT id, time_created, data FROM part WHERE message_id = ? ORDER BY id`, m.ID)})
	}
	return msgs
}

// sessionInfo reads what defaults need from a session row and its
// project: directory, worktree and the session's model.
func (l *lab) sessionInfo(id string) ocschema.SessionInfo {
	l.t.Helper()
	var info ocschema.SessionInfo
	var model sql.NullString
	err := l.db.QueryRow(`SELECT s.directory, p.worktree, s.model FROM session s JOIN project p ON p.id = s.project_id WHERE s.id = ?`, id).
		Scan(&info.Directory, &info.Worktree, &model)
	if err != nil {
		l.t.Fatal(err)
	}
	info.ProviderID = gjson.Get(model.String, "providerID").Str
	info.ModelID = gjson.Get(model.String, "id").Str
	return info
}

// serve starts `opencode serve` on the lab's home; it is killed at cleanup.
func (l *lab) serve(ctx context.Context) *opencodetest.Server {
	l.t.Helper()
	srv, err := l.e.Serve(ctx)
	if err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { srv.Kill() })
	return srv
}

// export runs `opencode export` and returns its result, failing the test
// only when OpenCode could not be run.
func (l *lab) export(ctx context.Context, id string) *opencodetest.Result {
	l.t.Helper()
	res, err := l.e.Run(ctx, "export", id)
	if err != nil {
		l.t.Fatal(err)
	}
	return res
}

// resume resumes a session and returns the result and the mock's verdicts
// of the chat requests it caused.
func (l *lab) resume(ctx context.Context, id string) (*opencodetest.Result, []mockanthropic.Request) {
	l.t.Helper()
	before := len(l.e.Mock.Requests())
	res, err := l.e.Resume(ctx, id, "Please continue.")
	if err != nil {
		l.t.Fatal(err)
	}
	var chat []mockanthropic.Request
	for _, r := range l.e.Mock.Requests()[before:] {
		if r.Chat {
			chat = append(chat, r)
		}
	}
	return res, chat
}

// accepted says the resume ran one chat request or more and the mock
// accepted every one.
func accepted(res *opencodetest.Result, chat []mockanthropic.Request) bool {
	if res.ExitCode != 0 || len(chat) == 0 {
		return false
	}
	for _, r := range chat {
		if r.Verdict != mockanthropic.Accepted {
			return false
		}
	}
	return true
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update || os.Getenv("SESSFIX_WRITE_OBSERVED") == "1" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -tags acceptance ./internal/opencodetest -run %s -update)", err, t.Name())
	}
	if string(want) != string(got) {
		t.Errorf("OpenCode's behaviour differs from %s (go test -tags acceptance ./internal/opencodetest -run '%s' -update rewrites it):\n%s",
			path, t.Name(), firstDiff(string(want), string(got)))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}

// runErr is the error event `opencode run --format json` printed.
type runErr struct{ name, message, ref string }

func (e runErr) String() string {
	if e.name == "" {
		return "(none)"
	}
	return e.name + ": " + e.message
}

func runError(res *opencodetest.Result) runErr {
	for _, line := range strings.Split(res.Stdout, "\n") {
		v := gjson.Parse(line)
		if v.Get("type").Str == "error" {
			return runErr{v.Get("error.name").Str, v.Get("error.data.message").Str, v.Get("error.data.ref").Str}
		}
	}
	return runErr{}
}
