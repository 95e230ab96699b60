//go:build acceptance

package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/internal/opencodetest/golden"
	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
)

// TestDatabaseFaults is the fault suite of the database repairs (SF501,
// SF502) on real OpenCode 1.18.33. OpenCode records one database once per
// run (grownDatabase: seven sessions with tool loops and long prompts,
// one of them then deleted with `opencode session delete`, which leaves
// free pages, and a further turn SIGKILLed, which leaves a -wal file).
// Each case damages a copy of it and checks that `sessfix scan` reports
// the damage (exit 1), that `sessfix fix --yes` with default flags makes
// the expected repair, that the result passes `PRAGMA integrity_check`,
// that real OpenCode starts on it, lists the sessions the result holds
// and resumes one whose rows all survived (or, where the case says none
// did and why, the one with the most rows left), the strict mock
// accepting the request, and that `sessfix undo` puts the damaged bytes
// back. Cases marked held also run fix while a real `opencode serve`
// holds the database (faultCase.held). The cases where sessfix makes no
// repair say so and what is checked instead: a torn log (no finding).
//
// Every damage is made by editing bytes, except the oversized log, which
// SQLite writes: what a torn write, a bad sector, a full disk or a copy
// cut short leave cannot be made by a real run of OpenCode, which writes
// through SQLite's journal; each case says what it stands for. What each
// case recovered (sessions, messages and parts) is the table in
// docs/safety.md, written with -update and checked against every run.
func TestDatabaseFaults(t *testing.T) {
	parallel(t)
	g := grownDatabase(t)
	var (
		mu      sync.Mutex
		results = map[string]faultResult{}
	)
	t.Run("case", func(t *testing.T) {
		for _, fc := range faultCases {
			t.Run(fc.name, func(t *testing.T) {
				t.Parallel()
				r := runFault(t, g, fc)
				if !t.Failed() {
					mu.Lock()
					results[fc.name] = r
					mu.Unlock()
				}
			})
		}
	})
	if len(results) != len(faultCases) {
		t.Logf("%d of %d cases finished (filtered with -run, or failed): docs/safety.md not checked", len(results), len(faultCases))
		return
	}
	checkFaultTable(t, results)
}

// A faultCase is one damage of the recorded database.
type faultCase struct {
	name string
	// damage says what the damage is and what leaves it in the wild, for
	// docs/safety.md.
	damage string
	// fromKilled starts from the files the SIGKILLed OpenCode left (the
	// database and its -wal) instead of the checkpointed database.
	fromKilled bool
	make       func(t *testing.T, g *grown, path string)
	// rule is the finding scan must report (exit 1), "" for none (exit 0:
	// nothing to repair, and fix is not run).
	rule string
	// mutation is the repair fix --yes must make.
	mutation string
	// held: fix --yes must first refuse with exit 4 while `opencode serve`
	// holds the database (SF501). An oversized log (SF502) is not even
	// reported while a program holds the database, the log being its to
	// checkpoint: then scan must say nothing of it and fix must leave the
	// files alone (quietWhileServed).
	held bool
	// noWhole says why no session survives with all its rows: the case
	// then resumes the session with the most rows left.
	noWhole string
	// unrecognised is what sessfix says (exit 3) of a file it cannot tell
	// is a database at all: scan and fix stop there and change nothing.
	unrecognised string
}

var faultCases = []faultCase{{
	// A torn write or bad sector on an index page: the index b-tree is
	// destroyed, the tables are whole. No OpenCode run writes a page
	// other than through SQLite's journal, so the page is overwritten.
	name:   "index-page",
	damage: "the root page of `part_session_idx` overwritten",
	make: func(t *testing.T, g *grown, path string) {
		rs := &realstore.Store{Path: path}
		rs.OverwritePage(t, rs.RootPage(t, "part_session_idx"))
	},
	rule: "SF501", mutation: "reindexDatabase", held: true,
}, {
	// Page 1 holds the file header and the root of sqlite_master: with it
	// overwritten (header kept) SQL cannot read the schema, and the
	// salvage reads the raw pages.
	name:   "schema-page",
	damage: "page 1 (the root of `sqlite_master`) overwritten after its 100-byte header",
	make: func(t *testing.T, g *grown, path string) {
		(&realstore.Store{Path: path}).OverwritePage(t, 1)
	},
	rule: "SF501", mutation: "salvageDatabase",
}, {
	// The first freelist trunk page (pages freed when OpenCode deleted a
	// session) overwritten: the free-page list no longer parses.
	name:   "freelist-trunk",
	damage: "the freelist's trunk page overwritten (free pages left by `opencode session delete`)",
	make: func(t *testing.T, g *grown, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		trunk := int(binary.BigEndian.Uint32(b[32:36]))
		if trunk == 0 {
			t.Fatal("the recorded database has no freelist")
		}
		(&realstore.Store{Path: path}).OverwritePage(t, trunk)
	},
	rule: "SF501", mutation: "salvageDatabase",
}, {
	// The 100-byte file header overwritten, as a bad first sector or
	// another program's write leaves it: the file no longer starts with
	// "SQLite format 3", and OpenCode cannot open it ("file is not a
	// database"). Its pages are laid out as a database's, so sessfix
	// takes it for a damaged one and salvages it from the raw pages.
	name:   "header",
	damage: "the 100-byte file header overwritten, \"SQLite format 3\" with it",
	make: func(t *testing.T, g *grown, path string) {
		overwrite(t, path, 0, 100)
	},
	rule: "SF501", mutation: "salvageDatabase",
}, {
	// The header's fields after "SQLite format 3" overwritten (page
	// size, counts, schema cookie...): SQL cannot open the file.
	name:   "header-fields",
	damage: "the header's 84 bytes after \"SQLite format 3\" overwritten",
	make: func(t *testing.T, g *grown, path string) {
		overwrite(t, path, 16, 100)
	},
	rule: "SF501", mutation: "salvageDatabase",
	noWhole: "the header's page count and freelist are gone with it: the page scan reads the free pages too " +
		"(the deleted session's rows come back, as rows of no session) and loses rows of every session",
}, {
	// The file cut at half its pages, as a full disk or a copy (backup,
	// sync) stopped part-way leaves it.
	name:   "truncated",
	damage: "the file cut to half its pages",
	make: func(t *testing.T, g *grown, path string) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(4096)
		if b, err := os.ReadFile(path); err == nil && len(b) > 18 {
			size = int64(binary.BigEndian.Uint16(b[16:18]))
		}
		if err := os.Truncate(path, fi.Size()/2/size*size); err != nil {
			t.Fatal(err)
		}
	},
	rule: "SF501", mutation: "salvageDatabase",
	noWhole: "every `message` page lay in the lost half; the sessions and the parts of the first half survive",
}, {
	// One leaf page of `message` overwritten (one that holds no row of
	// the session resumed afterwards).
	name:   "message-page",
	damage: "one leaf page of `message` overwritten",
	make: func(t *testing.T, g *grown, path string) {
		(&realstore.Store{Path: path}).DamagePage(t, "message", g.keepRows...)
	},
	rule: "SF501", mutation: "salvageDatabase",
}, {
	// The -wal a SIGKILLed OpenCode left, with its last frame cut in
	// half, as a power loss before the log reached the disk leaves it (a
	// killed process cannot: its writes are in the system's cache). SQLite
	// itself drops a torn frame and the transaction it belongs to when it
	// opens the log: the database is whole without the torn transaction,
	// so scan reports nothing and there is nothing to repair.
	name:       "wal-torn",
	damage:     "the `-wal` left by a SIGKILLed OpenCode, its last frame cut in half",
	fromKilled: true,
	make: func(t *testing.T, g *grown, path string) {
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path+"-wal", fi.Size()-4096/2); err != nil {
			t.Fatal(err)
		}
	},
}, {
	// The -wal a SIGKILLed OpenCode left, grown past 64 MiB and 4 times
	// the database: OpenCode's part rows written again and again (each
	// pair of writes leaves them as they were) with automatic checkpoints
	// off (a log this size is left when
	// checkpoints stop completing for days while OpenCode writes, which no
	// test can wait for; this case stands for that).
	name:       "wal-oversized",
	damage:     "the `-wal` left by a SIGKILLed OpenCode, grown past 64 MiB without a checkpoint",
	fromKilled: true,
	make:       growLog,
	rule:       "SF502", mutation: "checkpointWAL", held: true,
}}

// quietWhileServed checks that while a real `opencode serve` holds the
// database, scan does not report its oversized log (SF502) and fix --yes
// does not checkpoint it: the database and its -wal keep their bytes.
// (fix refuses a checkpoint with exit 4 only when OpenCode starts between
// the plan and the write, which no test can time.)
func quietWhileServed(t *testing.T, ctx context.Context, e *opencodetest.Env) {
	t.Helper()
	before := dbFiles(t, e.DBPath())
	srv, err := e.Serve(ctx)
	if err != nil {
		t.Fatalf("opencode serve: %v", err)
	}
	scan := sessfix(t, e, "scan", "--select", "SF502", "--format", "json", e.DataDir())
	fix := sessfix(t, e, "fix", "--yes", "--select", "SF502", e.DataDir())
	srv.Kill()
	if scan.ExitCode != 0 || strings.Contains(scan.Stdout, `"SF502"`) {
		t.Errorf("scan reports the log while opencode serve holds the database\n%s", scan)
	}
	if fix.ExitCode != 0 || strings.Contains(fix.Stderr, "checkpointWAL") {
		t.Errorf("fix --yes acts on the log while opencode serve holds the database\n%s", fix)
	}
	// OpenCode itself may fold the log in (its first write's automatic
	// checkpoint): that sessfix wrote nothing is seen in its backups,
	// where every write of sessfix begins.
	if runs := listRuns(t, e); len(runs) > 0 {
		t.Errorf("fix --yes made backup runs %v while opencode serve held the database", runs)
	}
	if after := dbFiles(t, e.DBPath()); !bytes.Equal(before[""], after[""]) {
		t.Log("opencode serve wrote the database (its own checkpoint of the log); restoring the files")
		for _, suf := range []string{"", "-wal", "-shm"} {
			os.Remove(e.DBPath() + suf)
		}
		for suf, b := range before {
			if err := os.WriteFile(e.DBPath()+suf, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// overwrite writes realstore.Torn over the bytes [from, to) of the file.
func overwrite(t *testing.T, path string, from, to int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[from:to], realstore.Torn)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// growLog rewrites OpenCode's part rows (each pair of writes leaves them
// as they were), with automatic
// checkpoints off, until the database's -wal is larger than 64 MiB and 4
// times the database, and leaves the files as they are then (a copy
// taken while the connection is open: closing the last connection would
// checkpoint the log).
func growLog(t *testing.T, _ *grown, path string) {
	dir := t.TempDir()
	work := filepath.Join(dir, "opencode.db")
	for suf, b := range dbFiles(t, path) {
		if err := os.WriteFile(work+suf, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+work+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for i := 0; ; i++ {
		wal, err1 := os.Stat(work + "-wal")
		main, err2 := os.Stat(work)
		if err1 == nil && err2 == nil && wal.Size() > 66<<20 && wal.Size() > 5*main.Size() {
			break
		}
		if i == 20000 {
			t.Fatal("the log did not grow past 64 MiB")
		}
		// SQLite does not write a row that is rewritten unchanged: each
		// pair of updates moves time_updated and puts it back.
		for _, d := range []int{1, -1} {
			if _, err := db.Exec("UPDATE part SET time_updated = time_updated + ?", d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for suf, b := range dbFiles(t, work) {
		if err := os.WriteFile(path+suf, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// faultResult is what a case recovered, for docs/safety.md.
type faultResult struct {
	scan, repair string
	// opencode says what real OpenCode did on the result.
	opencode string
	// had and got count the sessions, messages and parts before the
	// damage and in the result; whole counts the sessions with every row.
	had, got counts
	// extra counts the rows of the result the undamaged database does not
	// hold (deleted rows read back from free pages).
	extra counts
	whole int
}

type counts struct{ sessions, messages, parts int }

// runFault runs one case on a copy of the recorded database.
func runFault(t *testing.T, g *grown, fc faultCase) faultResult {
	acquire(t)
	ctx := testCtx(t, 6*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	src := g.dir
	if fc.fromKilled {
		src = g.killed
	}
	if err := e.LoadData(src); err != nil {
		t.Fatal(err)
	}
	// OpenCode 1.18 resumes a session in the directory it recorded.
	e.ProjectDir = g.env.ProjectDir
	had := readRows(t, e.DBPath())
	fc.make(t, g, e.DBPath())
	damaged := dbFiles(t, e.DBPath())
	r := faultResult{scan: "no finding", repair: "none", had: had.counts()}

	scan := sessfix(t, e, "scan", "--format", "json", e.DataDir())
	// The codes only: the whole document is printed where a check fails,
	// and logging it here pushed the failure out of CI's shortened output.
	var doc scanDoc
	_ = json.Unmarshal([]byte(scan.Stdout), &doc)
	t.Logf("scan: exit %d, codes %v", scan.ExitCode, sortedCodes(doc.Findings))
	if fc.unrecognised != "" {
		fix := sessfix(t, e, "fix", "--yes", e.DataDir())
		for _, res := range []*sfResult{scan, fix} {
			if res.ExitCode != 3 || !strings.Contains(res.Stdout+res.Stderr, fc.unrecognised) {
				t.Errorf("sessfix does not say %q (exit 3)\n%s", fc.unrecognised, res)
			}
		}
		if after := dbFiles(t, e.DBPath()); !bytes.Equal(after[""], damaged[""]) {
			t.Error("fix changed a file it cannot read")
		}
		if res, err := e.Run(ctx, "session", "list", "--format", "json"); err == nil {
			t.Logf("opencode session list on it: exit %d\n%s", res.ExitCode, res.Stderr)
		}
		r.scan, r.repair = "exit 3: "+fc.unrecognised, "none"
		r.opencode = "not run: nothing was repaired"
		return r
	}
	if fc.rule == "" {
		// The killed turn's session may have findings of its own (exit 1).
		if scan.ExitCode > 1 || strings.Contains(scan.Stdout, `"SF50`) {
			t.Fatalf("scan reports a database finding on a database SQLite itself keeps whole\n%s", scan)
		}
	} else {
		if scan.ExitCode != 1 || !strings.Contains(scan.Stdout, `"`+fc.rule+`"`) {
			t.Fatalf("scan does not report %s (exit 1)\n%s", fc.rule, scan)
		}
		r.scan = fc.rule
		switch {
		case fc.held && fc.rule == "SF502":
			quietWhileServed(t, ctx, e)
		case fc.held:
			t.Logf("while opencode serve holds it:\n%s", refusedWhileServed(t, ctx, e).Stderr)
		}
		fix := sessfix(t, e, "fix", "--yes", e.DataDir())
		t.Logf("fix --yes:\n%s", fix.Stderr)
		if fix.ExitCode != 0 || !strings.Contains(fix.Stderr, "("+fc.mutation+")") {
			t.Fatalf("fix --yes did not make the %s repair\n%s", fc.mutation, fix)
		}
		r.repair = fc.mutation
		if check := integrityCheck(t, e.DBPath()); check != "ok" {
			t.Fatalf("integrity_check on the repaired database: %s", check)
		}
	}

	got := readRows(t, e.DBPath())
	r.got = had.kept(got)
	all := got.counts()
	r.extra = counts{all.sessions - r.got.sessions, all.messages - r.got.messages, all.parts - r.got.parts}
	whole := had.whole(got)
	r.whole = len(whole)
	t.Logf("recovered %d of %d sessions (%d whole), %d of %d messages, %d of %d parts; rows the undamaged database does not hold: %+v",
		r.got.sessions, r.had.sessions, r.whole, r.got.messages, r.had.messages, r.got.parts, r.had.parts, r.extra)
	for _, m := range []struct {
		what     string
		had, got map[string]string
	}{{"session", had.sessions, got.sessions}, {"message", had.messages, got.messages}, {"part", had.parts, got.parts}} {
		for id, ses := range m.had {
			if _, ok := m.got[id]; !ok {
				t.Logf("lost %s %s (session %s)", m.what, id, ses)
			}
		}
		for id, ses := range m.got {
			if _, ok := m.had[id]; !ok {
				t.Logf("not in the undamaged database: %s %s (session %s)", m.what, id, ses)
			}
		}
	}

	listed := openCodeSessions(t, ctx, e)
	slices.Sort(listed)
	if want := got.sessionIDs(); !slices.Equal(listed, want) {
		t.Errorf("opencode lists sessions %v, the database holds %v", listed, want)
	}
	var resume string
	switch {
	case len(whole) > 0 && fc.noWhole != "":
		t.Errorf("%d sessions survived whole, where the case says none does: %s", len(whole), fc.noWhole)
	case slices.Contains(whole, g.keep):
		resume = g.keep
	case len(whole) > 0:
		resume = whole[0]
	case fc.noWhole == "":
		t.Fatal("no session survived whole: none can be resumed")
	default:
		resume = got.fullest()
		t.Logf("no session survived whole (%s): resuming %s, the one with the most rows left", fc.noWhole, resume)
	}
	resumeAccepted(t, ctx, e, resume)
	r.opencode = fmt.Sprintf("listed %d sessions, resumed a whole one", len(listed))
	if len(whole) == 0 {
		r.opencode = fmt.Sprintf("listed %d sessions, resumed the one with the most rows left (none is whole)", len(listed))
	}

	if fc.rule != "" {
		want := map[string][]byte{"": damaged[""]}
		if w, ok := damaged["-wal"]; ok {
			want["-wal"] = w
		}
		// Fix may have repaired the killed turn's session too, in a run
		// of its own: undo every run, newest first.
		runs := backupRuns(t, e)
		undoAfterOpenCode(t, e, runs, want)
	}
	return r
}

// integrityCheck runs PRAGMA integrity_check on a copy of the database's
// files (the repaired files are left as sessfix wrote them).
func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	db := openCopy(t, path)
	defer db.Close()
	var rows []string
	r, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		return err.Error()
	}
	defer r.Close()
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			return err.Error()
		}
		rows = append(rows, s)
	}
	if err := r.Err(); err != nil {
		return err.Error()
	}
	return strings.Join(rows, "; ")
}

// openCopy opens a copy of the database's files (the -wal is read, as
// OpenCode reads it), so that reading them leaves no trace next to them.
func openCopy(t *testing.T, path string) *sql.DB {
	t.Helper()
	dir := t.TempDir()
	cp := filepath.Join(dir, "opencode.db")
	for suf, b := range dbFiles(t, path) {
		if suf == "-shm" {
			continue
		}
		if err := os.WriteFile(cp+suf, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := opencodetest.OpenDB(cp)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// dbRows are a database's session, message and part ids, each with its
// session.
type dbRows struct{ sessions, messages, parts map[string]string }

func readRows(t *testing.T, path string) dbRows {
	t.Helper()
	db := openCopy(t, path)
	defer db.Close()
	read := func(q string) map[string]string {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var id, ses string
			if err := rows.Scan(&id, &ses); err != nil {
				t.Fatal(err)
			}
			m[id] = ses
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return m
	}
	return dbRows{
		sessions: read("SELECT id, id FROM session"),
		messages: read("SELECT id, session_id FROM message"),
		parts:    read("SELECT id, session_id FROM part"),
	}
}

func (d dbRows) counts() counts { return counts{len(d.sessions), len(d.messages), len(d.parts)} }

// kept counts the rows of d that other holds too.
func (d dbRows) kept(other dbRows) counts {
	n := func(a, b map[string]string) int {
		k := 0
		for id := range a {
			if _, ok := b[id]; ok {
				k++
			}
		}
		return k
	}
	return counts{n(d.sessions, other.sessions), n(d.messages, other.messages), n(d.parts, other.parts)}
}

func (d dbRows) sessionIDs() []string {
	var ids []string
	for id := range d.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// fullest is the session with the most message and part rows, the first
// by id of those with as many.
func (d dbRows) fullest() string {
	n := map[string]int{}
	for _, m := range []map[string]string{d.messages, d.parts} {
		for _, ses := range m {
			n[ses]++
		}
	}
	best := ""
	for _, id := range d.sessionIDs() {
		if best == "" || n[id] > n[best] {
			best = id
		}
	}
	return best
}

// whole lists the sessions of d that got holds with every message and part.
func (d dbRows) whole(got dbRows) []string {
	var out []string
	for _, id := range d.sessionIDs() {
		if _, ok := got.sessions[id]; !ok {
			continue
		}
		ok := true
		for _, m := range []struct{ had, got map[string]string }{{d.messages, got.messages}, {d.parts, got.parts}} {
			for row, ses := range m.had {
				if _, there := m.got[row]; ses == id && !there {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, id)
		}
	}
	return out
}

// grown is the database real OpenCode 1.18.33 recorded for the suite.
type grown struct {
	env *opencodetest.Env
	// dir holds opencode.db, checkpointed (in WAL mode, no -wal); killed
	// holds the database, -wal and -shm as the SIGKILLed turn left them.
	dir, killed string
	// keep is a session no case's page damage touches; keepRows its
	// message and part ids.
	keep     string
	keepRows []string
}

// grownDatabase records the suite's database with real OpenCode 1.18.33:
// seven sessions, each a tool loop after a long prompt (so that message
// and part span several pages); the seventh, with a longer prompt, is then
// deleted with `opencode session delete` (its pages go to the freelist);
// the database is checkpointed and copied; then a turn of the sixth
// session is SIGKILLed while the mock holds its answer, which leaves the
// -wal file that the killed-database cases start from.
func grownDatabase(t *testing.T) *grown {
	t.Helper()
	slots <- struct{}{}
	defer func() { <-slots }()
	ctx := testCtx(t, 8*time.Minute)
	e := opencodetest.NewT(t, opencodetest.Options{Version: opencodetest.V1_18, Timeout: 3 * time.Minute})
	g := &grown{env: e, dir: filepath.Join(t.TempDir(), "grown"), killed: filepath.Join(t.TempDir(), "killed")}
	var ids []string
	for i := range 7 {
		n := 60
		if i == 6 {
			n = 2000
		}
		prompt := strings.Repeat(fmt.Sprintf("session %d, a long prompt to fill pages. ", i), n) +
			fmt.Sprintf("[[tool:bash echo fault suite %d]]", i)
		res, err := e.Prompt(ctx, prompt)
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("prompt %d: %v\n%s", i, err, res)
		}
		ids = append(ids, res.SessionID)
	}
	if res, err := e.Run(ctx, "session", "delete", ids[6]); err != nil || res.ExitCode != 0 {
		t.Fatalf("opencode session delete: %v\n%s", err, res)
	}
	g.keep = ids[len(ids)-2]
	for _, m := range (dataDir{t, e.DataDir()}).session(g.keep) {
		g.keepRows = append(g.keepRows, m.ID)
		for _, p := range m.Parts {
			g.keepRows = append(g.keepRows, p.ID)
		}
	}
	checkpoint(t, e.DBPath())
	if err := opencodetest.CopyTree(e.DataDir(), g.dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(g.dir, "opencode.db"))
	if err != nil {
		t.Fatal(err)
	}
	if free := binary.BigEndian.Uint32(b[36:40]); free == 0 {
		t.Fatal("deleting a session left no free pages in the recorded database")
	}

	pause := e.Mock.Pause(mockanthropic.StageReceived, mockanthropic.ChatRequest)
	defer pause.Release()
	before := len((dataDir{t, e.DataDir()}).session(ids[0]))
	proc, err := e.StartPrompt(ids[0], "one more turn, killed while its answer is held")
	if err != nil {
		t.Fatal(err)
	}
	err = proc.KillAt(ctx, pause, func() bool {
		msgs, err := opencodetest.LoadSession(e.DataDir(), ids[0])
		return err == nil && len(msgs) > before+1
	})
	if err != nil {
		t.Fatalf("killing a turn: %v", err)
	}
	pause.Release()
	if fi, err := os.Stat(e.DBPath() + "-wal"); err != nil || fi.Size() <= 32 {
		t.Fatalf("the SIGKILLed OpenCode left no -wal with frames (%v)", err)
	}
	if err := os.MkdirAll(g.killed, 0o755); err != nil {
		t.Fatal(err)
	}
	for suf, b := range dbFiles(t, e.DBPath()) {
		if err := os.WriteFile(filepath.Join(g.killed, "opencode.db"+suf), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// The generated table in docs/safety.md lies between these markers.
const (
	faultTableBegin = "<!-- TestDatabaseFaults: begin -->\n"
	faultTableEnd   = "<!-- TestDatabaseFaults: end -->\n"
)

var faultDateRe = regexp.MustCompile(`measured on (\d{4}-\d{2}-\d{2})`)

// checkFaultTable checks the table of docs/safety.md against this run's
// results, or writes it with -update (dated today).
func checkFaultTable(t *testing.T, results map[string]faultResult) {
	root, err := opencodetest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "docs", "safety.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(faultTableBegin)), bytes.Index(doc, []byte(faultTableEnd))
	if i < 0 || j < i {
		t.Fatalf("docs/safety.md has no %q ... %q section", faultTableBegin, faultTableEnd)
	}
	old := doc[i+len(faultTableBegin) : j]
	date := time.Now().UTC().Format("2006-01-02")
	if !golden.Update() {
		if m := faultDateRe.FindSubmatch(old); m != nil {
			date = string(m[1])
		}
	}
	got := renderFaultTable(results, date)
	if golden.Update() {
		out := append(append(append([]byte(nil), doc[:i+len(faultTableBegin)]...), got...), doc[j:]...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	// The counts can move by a row or a page from one recording to the
	// next (the page layout follows what OpenCode wrote, times and all):
	// the check holds the table to what each case reports and repairs, and
	// shows this run's counts.
	t.Logf("this run:\n%s", got)
	for _, fc := range faultCases {
		if !bytes.Contains(old, []byte(faultRowHead(fc, results[fc.name]))) {
			t.Errorf("docs/safety.md's fault table has no row %q; if the change is intended, regenerate it with "+
				"go test -tags acceptance -run TestDatabaseFaults ./e2e -update", faultRowHead(fc, results[fc.name]))
		}
	}
}

// faultRowHead is the beginning of a case's row in the table: its name,
// damage, finding and repair.
func faultRowHead(fc faultCase, r faultResult) string {
	return fmt.Sprintf("| %s | %s | %s | %s |", fc.name, fc.damage, r.scan, code(r.repair))
}

func renderFaultTable(results map[string]faultResult, date string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Real OpenCode %s, measured on %s (`TestDatabaseFaults`, e2e): one database recorded per run, ", opencodetest.V1_18, date)
	b.WriteString("each case a copy of it with one damage. Where a repair was made, its result passed `integrity_check`, ")
	b.WriteString("real OpenCode started on it, and undo put the damaged bytes back. Rows are counted against the ")
	b.WriteString("undamaged copy; a session is whole when all its messages and parts survived. The page layout follows what ")
	b.WriteString("OpenCode wrote (times and all), so the counts can move by a row or a page from one recording to the next: the ")
	b.WriteString("test holds this table to each case's finding and repair, and logs its own counts.\n\n")
	b.WriteString("| case | damage | scan | repair | sessions (whole) | messages | parts | OpenCode on the result |\n|---|---|---|---|---|---|---|---|\n")
	frac := func(got, had int) string { return fmt.Sprintf("%d of %d", got, had) }
	for _, fc := range faultCases {
		r := results[fc.name]
		if fc.unrecognised != "" {
			fmt.Fprintf(&b, "%s – | – | – | %s |\n", faultRowHead(fc, r), r.opencode)
			continue
		}
		fmt.Fprintf(&b, "%s %s (%d) | %s | %s | %s%s |\n", faultRowHead(fc, r),
			frac(r.got.sessions, r.had.sessions), r.whole, frac(r.got.messages, r.had.messages), frac(r.got.parts, r.had.parts), r.opencode, extra(r.extra))
	}
	return b.Bytes()
}

// extra says what rows of the result the undamaged database did not hold.
func extra(c counts) string {
	if c == (counts{}) {
		return ""
	}
	return fmt.Sprintf("; the result also holds %d session, %d message and %d part rows the undamaged database did not (deleted rows read back from free pages)", c.sessions, c.messages, c.parts)
}

func code(s string) string {
	if s == "none" {
		return s
	}
	return "`" + s + "`"
}
