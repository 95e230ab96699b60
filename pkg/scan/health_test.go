package scan_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver the tests change copies with

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// scanPath scans the store at path the way `sessfix scan PATH` does and
// returns the store-health findings (SF5xx).
func scanPath(t *testing.T, path string, opts *scan.Options) []scan.Finding {
	t.Helper()
	d, err := shapes.Open([]string{path})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer d.Close()
	if len(d.Stores) != 1 {
		t.Fatalf("%s opened as %d stores (failed: %v)", path, len(d.Stores), d.Failed)
	}
	res, err := scan.Run(context.Background(), d.Stores, opts)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Stores[0].Err; e != nil {
		t.Fatalf("scan of %s: %v", path, e)
	}
	var out []scan.Finding
	for _, f := range res.Findings {
		if strings.HasPrefix(f.Code, "SF5") {
			out = append(out, f)
		}
	}
	return out
}

// execSQL runs statements on the database at path.
func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// oneDamage wants exactly one SF501 error finding whose message holds
// every one of want.
func oneDamage(t *testing.T, fs []scan.Finding, want ...string) {
	t.Helper()
	if len(fs) != 1 || fs[0].Code != "SF501" || fs[0].Severity != scan.Error {
		t.Fatalf("want one SF501 error, got %+v", fs)
	}
	// fix salvages a 1.x database; an OpenCode 2 database it never writes.
	if wantFix := map[bool]string{true: "salvageDatabase|reindexDatabase"}[fs[0].Shape == "sqlite"]; fs[0].Fix != wantFix {
		t.Errorf("SF501 on a %s database names the fix %q, want %q", fs[0].Shape, fs[0].Fix, wantFix)
	}
	for _, w := range want {
		if !strings.Contains(fs[0].Message, w) {
			t.Errorf("message %q lacks %q", fs[0].Message, w)
		}
	}
}

func TestHealthyStoresReportNoStoreHealth(t *testing.T) {
	for _, v := range realstore.Versions {
		rs := realstore.Copy(t, v)
		if fs := scanPath(t, rs.Path, nil); len(fs) != 0 {
			t.Errorf("%s: %+v", v, fs)
		}
		if fs := scanPath(t, rs.Path, &scan.Options{Deep: true}); len(fs) != 0 {
			t.Errorf("%s --deep: %+v", v, fs)
		}
	}
	if fs := scanPath(t, "../../testdata/demo/sessions", nil); len(fs) != 0 {
		t.Errorf("demo: %+v", fs)
	}
}

func TestDamagedPartPage(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.DamagePage(t, "part")
	oneDamage(t, scanPath(t, rs.Path, nil), "quick_check fails", "affected: part", "sessions could be read")
}

func TestDamagedMessagePage(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, rs.RootPage(t, "message"))
	oneDamage(t, scanPath(t, rs.Path, nil), "affected: message", "0 of 3 sessions could be read")
}

func TestDamagedIndexPage(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, rs.RootPage(t, "part_session_idx"))
	oneDamage(t, scanPath(t, rs.Path, nil), "affected: part_session_idx")
}

func TestDamagedSchemaPage(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, 1)
	oneDamage(t, scanPath(t, rs.Path, nil), "sql cannot open the database", "malformed")
}

func TestDamagedHeader(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	b, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[16], b[17] = 0x00, 0x03 // a page size that is no power of two
	copy(b[28:32], "torn")    // and a page count far past the file's end
	if err := os.WriteFile(rs.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fs := scanPath(t, rs.Path, nil)
	oneDamage(t, fs, "sql cannot open the database", "file is not a database")
	// The damaged header's page size gives no database size to compare
	// the file with.
	if strings.Contains(fs[0].Message, "truncated") {
		t.Errorf("a damaged header is taken for a truncated file: %s", fs[0].Message)
	}
}

func TestTruncatedDatabase(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	fi, err := os.Stat(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(rs.Path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	oneDamage(t, scanPath(t, rs.Path, nil), "sql cannot open the database", "the file is truncated")
}

// walCopy is a copy of the recorded database in WAL mode with a -wal file
// of size bytes (sparse, no frames in it).
func walCopy(t *testing.T, size int64) string {
	rs := realstore.Copy(t, ocrelease.V1_18)
	execSQL(t, rs.Path, "PRAGMA journal_mode=WAL")
	if err := os.WriteFile(rs.Path+"-wal", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(rs.Path+"-wal", size); err != nil {
		t.Fatal(err)
	}
	return rs.Path
}

func TestOversizedWAL(t *testing.T) {
	path := walCopy(t, 70<<20)
	fs := scanPath(t, path, nil)
	if len(fs) != 1 || fs[0].Code != "SF502" || !strings.Contains(fs[0].Message, "70.0 MiB") || fs[0].Location.Path != path+"-wal" {
		t.Fatalf("want one SF502 at the -wal file, got %+v", fs)
	}
}

func TestSmallWALIsNotReported(t *testing.T) {
	// Far larger than the database, but under the 64 MiB floor.
	if fs := scanPath(t, walCopy(t, 60<<20), nil); len(fs) != 0 {
		t.Fatalf("%+v", fs)
	}
}

func TestOversizedRecord(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	// The recorded parts are small: lower the threshold to the largest.
	db, err := sql.Open("sqlite", "file:"+rs.Path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var id, session string
	var size int64
	err = db.QueryRow(`SELECT id, session_id, octet_length(data) FROM part ORDER BY octet_length(data) DESC LIMIT 1`).Scan(&id, &session, &size)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	fs := scanPath(t, rs.Path, &scan.Options{Oversized: size})
	if len(fs) != 1 || fs[0].Code != "SF503" || fs[0].PartID != id || fs[0].SessionID != session || fs[0].Location.Table != "part" {
		t.Fatalf("want one SF503 on part %s, got %+v", id, fs)
	}
	// The message names the threshold the scan used, not the default.
	if want := fmt.Sprintf("more than the %d bytes opencode loads comfortably", size); !strings.Contains(fs[0].Message, want) {
		t.Errorf("SF503 says %q, want it to name the threshold (%q)", fs[0].Message, want)
	}
	if fs := scanPath(t, rs.Path, &scan.Options{Oversized: size + 1}); len(fs) != 0 {
		t.Fatalf("above the largest part: %+v", fs)
	}
}

func TestFreeSpace(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	execSQL(t, rs.Path, "CREATE TABLE scratch (b BLOB)", "INSERT INTO scratch VALUES (zeroblob(40*1024*1024))")
	if fs := scanPath(t, rs.Path, nil); len(fs) != 0 {
		t.Fatalf("before the delete: %+v", fs)
	}
	execSQL(t, rs.Path, "DROP TABLE scratch")
	fs := scanPath(t, rs.Path, nil)
	if len(fs) != 1 || fs[0].Code != "SF504" || fs[0].Severity != scan.Info || !strings.Contains(fs[0].Message, "are free") {
		t.Fatalf("want one SF504, got %+v", fs)
	}
}

// storeNotes scans the store at path and returns its notes.
func storeNotes(t *testing.T, path string) []string {
	t.Helper()
	d, err := shapes.Open([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := scan.Run(context.Background(), d.Stores, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res.Stores[0].Info.Notes
}

func TestJSONStoreSaysHowMuchIsReadable(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_1)
	for _, n := range storeNotes(t, rs.Path) {
		if strings.Contains(n, "readable") {
			t.Fatalf("a healthy store has the note %q", n)
		}
	}
	parts, err := filepath.Glob(filepath.Join(rs.Path, "part", "*", "*.json"))
	if err != nil || len(parts) < 2 {
		t.Fatalf("parts: %v %v", parts, err)
	}
	for _, p := range parts[:2] {
		if err := os.WriteFile(p, make([]byte, 64), 0o644); err != nil { // NUL-filled, as after a crash
			t.Fatal(err)
		}
	}
	want := "3 of 3 sessions readable; 2 records unreadable (SF201)"
	if notes := storeNotes(t, rs.Path); !slices.Contains(notes, want) {
		t.Fatalf("notes %q lack %q", notes, want)
	}
}

func TestOversizedWALHeldByAProgramIsNotReported(t *testing.T) {
	path := walCopy(t, 70<<20)
	// Another program with the -wal file open from its start (an
	// inherited descriptor, so it holds it before Start returns).
	f, err := os.Open(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("sleep", "600")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if fs := scanPath(t, path, nil); len(fs) != 0 {
		t.Fatalf("the log is the holding program's to checkpoint: %+v", fs)
	}
}

// copyFile copies src to a new file in a temporary directory.
func copyFile(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestOpenCode2DatabaseHealth(t *testing.T) {
	for _, dir := range []string{"native", "after-import", "rejected-rows"} {
		path := copyFile(t, filepath.Join("..", "..", "testdata", "opencode2", dir, "opencode.db"))
		if fs := scanPath(t, path, &scan.Options{Deep: true}); len(fs) != 0 {
			t.Errorf("%s: %+v", dir, fs)
		}
	}
	path := copyFile(t, filepath.Join("..", "..", "testdata", "opencode2", "native", "opencode.db"))
	rs := &realstore.Store{Path: path}
	rs.OverwritePage(t, rs.RootPage(t, "session_message"))
	fs := scanPath(t, path, nil)
	oneDamage(t, fs, "affected: session_message")
	if fs[0].Shape != "sqlite2" {
		t.Errorf("reported for the %s shape, want sqlite2", fs[0].Shape)
	}
}

// TestUnopenableDatabaseWithoutSF501: with the store-health rules
// ignored, a database SQL cannot open is an unreadable store, as before,
// and never a clean scan.
func TestUnopenableDatabaseWithoutSF501(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, 1)
	d, err := shapes.Open([]string{rs.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := scan.Run(context.Background(), d.Stores, &scan.Options{Ignore: []string{"SF5"}})
	if err != nil {
		t.Fatal(err)
	}
	var dmg *store.DamagedError
	if !errors.As(res.Stores[0].Err, &dmg) || len(res.Findings) != 0 {
		t.Fatalf("store error %v, findings %+v: want the damage as the store's error", res.Stores[0].Err, res.Findings)
	}
}

// TestUnloadableSessionPointsAtTheDeepScan: a session that fails to load
// on a damaged page (SF201) says how to see the damage with sessfix itself
// (SF501's full check), not with a sqlite3 shell the user may not have.
func TestUnloadableSessionPointsAtTheDeepScan(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, rs.RootPage(t, "message"))
	d, err := shapes.Open([]string{rs.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := scan.Run(context.Background(), d.Stores, &scan.Options{Select: []string{"SF201"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "see the damage with `sessfix scan --deep --select SF501 " + rs.Path + "`"
	n := 0
	for _, f := range res.Findings {
		if f.Code != "SF201" {
			continue
		}
		n++
		if !strings.Contains(f.Message, want) || strings.Contains(f.Message, "sqlite3") {
			t.Errorf("SF201 message %q does not say %q", f.Message, want)
		}
	}
	if n == 0 {
		t.Fatalf("no SF201 finding for the sessions on the damaged page: %+v", res.Findings)
	}
}

// TestUnopenableDatabaseNamedAsGiven: a database SQL cannot open, scanned
// by a relative path, is named as the user named it, as a database that
// opens is: its store and its SF501 finding say "opencode.db", not the
// absolute path.
func TestUnopenableDatabaseNamedAsGiven(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, 1)
	t.Chdir(filepath.Dir(rs.Path))
	d, err := shapes.Open([]string{"opencode.db"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if len(d.Stores) != 1 || d.Stores[0].Info().Path != "opencode.db" {
		t.Fatalf("stores %v (failed %v), want one named opencode.db", d.Stores, d.Failed)
	}
	fs := scanPath(t, "opencode.db", nil)
	oneDamage(t, fs, "sql cannot open the database")
	if fs[0].Location.Path != "opencode.db" || fs[0].StorePath != "opencode.db" {
		t.Errorf("SF501 at %q in store %q, want opencode.db", fs[0].Location.Path, fs[0].StorePath)
	}
}

// TestOversizedPartsGoWithTheirSessions: a store-health finding about a
// part (SF503) is ordered with its session's other findings, as Result
// promises (store, then session id), so a printer grouping by session sees
// each session once.
func TestOversizedPartsGoWithTheirSessions(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.WhitespaceText(t)
	d, err := shapes.Open([]string{rs.Path})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Every part is "oversized": each session has SF503 findings.
	res, err := scan.Run(context.Background(), d.Stores, &scan.Options{Oversized: 1})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	codes := map[string]bool{}
	for _, f := range res.Findings {
		codes[f.Code] = true
		if n := len(order); n == 0 || order[n-1] != f.SessionID {
			order = append(order, f.SessionID)
		}
	}
	if !codes["SF503"] || len(codes) < 2 {
		t.Fatalf("want SF503 and other findings, got codes %v", codes)
	}
	if !slices.IsSorted(order) || len(slices.Compact(slices.Clone(order))) != len(order) {
		t.Errorf("findings by session %q: each session's findings are not together, in id order", order)
	}
}

// TestOversizedFromRowsMatchesTheQuery: a scan of every session measures
// SF503 on the rows it loads; a scan of some sessions leaves it to the
// health check's query of the part table. Both find the same parts, the
// same way, including a part whose message is gone and a part whose data
// is not JSON.
func TestOversizedFromRowsMatchesTheQuery(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	execSQL(t, rs.Path,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
		 SELECT 'prt_zzzzzzzzzzzzOrphanedPart01', 'msg_zzzzzzzzzzzzGoneMessage01', session_id, time_created, time_updated, data FROM part LIMIT 1`,
		`UPDATE part SET data = '{"type":"text","text":"cut' WHERE rowid = (SELECT max(rowid) FROM part WHERE id != 'prt_zzzzzzzzzzzzOrphanedPart01')`,
	)
	var parts int
	db, err := sql.Open("sqlite", "file:"+rs.Path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	rows, err := db.Query(`SELECT id FROM session`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if err := db.QueryRow(`SELECT count(*) FROM part`).Scan(&parts); err != nil {
		t.Fatal(err)
	}
	db.Close()
	oversized := func(fs []scan.Finding) []string {
		var out []string
		for _, f := range fs {
			if f.Code == "SF503" {
				out = append(out, fmt.Sprintf("%s %s %s %s %s", f.SessionID, f.MessageID, f.PartID, f.Location, f.Message))
			}
		}
		slices.Sort(out)
		return out
	}
	all := oversized(scanPath(t, rs.Path, &scan.Options{Oversized: 1}))
	some := oversized(scanPath(t, rs.Path, &scan.Options{Oversized: 1, Sessions: ids}))
	if len(all) != parts {
		t.Errorf("the whole scan reports %d oversized parts, the database holds %d parts: %q", len(all), parts, all)
	}
	if !slices.Equal(all, some) {
		t.Errorf("measured on the rows loaded:\n%s\nby the query:\n%s", strings.Join(all, "\n"), strings.Join(some, "\n"))
	}
	for _, want := range []string{"prt_zzzzzzzzzzzzOrphanedPart01", "msg_zzzzzzzzzzzzGoneMessage01"} {
		if !strings.Contains(strings.Join(all, "\n"), want) {
			t.Errorf("no SF503 names %s", want)
		}
	}
}
