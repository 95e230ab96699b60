package salvage_test

import (
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store/sqlite/salvage"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// grow makes the recorded database larger: copies of every part row,
// each with a new id, so that part spans many leaf pages and one page's
// loss is a small share of it. The damage the tests then make is by
// overwriting pages of the file, as a torn write would.
func grow(t *testing.T, path string, copies int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
		SELECT p.id || printf('%04d', n.i), p.message_id, p.session_id, p.time_created, p.time_updated, p.data
		FROM part p, n ORDER BY n.i, p.id`, copies)
	if err != nil {
		t.Fatal(err)
	}
}

// leaf is a leaf page of a table: its number and how many rows it held.
type leaf struct{ page, cells int }

// leaves are the leaf pages of table in key order (SQLite's dbstat).
func leaves(t *testing.T, path, table string) []leaf {
	t.Helper()
	r, err := open(t, path).Query("SELECT pageno, ncell FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", table)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []leaf
	for r.Next() {
		var l leaf
		if err := r.Scan(&l.page, &l.cells); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if len(out) < 3 {
		t.Fatalf("%s has %d leaf pages, want 3 or more", table, len(out))
	}
	return out
}

// idOf is the id column of a rows line ("rowid|'id',...").
func idOf(line string) string {
	_, vals, _ := strings.Cut(line, "|")
	id, _, _ := strings.Cut(vals, ",")
	return strings.Trim(id, "'")
}

func TestDamagedPartPageLosesOnlyItsRows(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	grow(t, rs.Path, 20)
	want := rows(t, rs.Path)
	ls := leaves(t, rs.Path, "part")
	hit := ls[len(ls)/2]
	rs.OverwritePage(t, hit.page)

	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	sameRows(t, want, got, "part")
	var missing []string
	for _, line := range want["part"] {
		if !slices.Contains(got["part"], line) {
			missing = append(missing, idOf(line))
		}
	}
	if len(got["part"])+hit.cells != len(want["part"]) || len(missing) != hit.cells {
		t.Fatalf("part: %d of %d rows salvaged, %d missing; the damaged page held %d",
			len(got["part"]), len(want["part"]), len(missing), hit.cells)
	}
	tr := rep.Table("part")
	t.Logf("part: %d of %d rows salvaged; page %d held %d", len(got["part"]), len(want["part"]), hit.page, hit.cells)
	if tr == nil || len(tr.Lost) != 1 || tr.Read != int64(len(got["part"])) {
		t.Fatalf("part report %+v", tr)
	}
	if n, exact := tr.LostRows(); n != hit.cells || !exact {
		t.Errorf("lost rows %d (exact %v), want %d", n, exact, hit.cells)
	}
	if ids := tr.Lost[0].IDs; !slices.Equal(ids, missing) {
		t.Errorf("lost ids %v, want %v", ids, missing)
	}
	if len(tr.Lost[0].SessionIDs) == 0 || len(tr.Lost[0].MessageIDs) == 0 || len(rep.LostSessions) == 0 {
		t.Errorf("lost range names no session or message: %+v, lost sessions %v", tr.Lost[0], rep.LostSessions)
	}
	for _, other := range rep.Tables {
		if other.Name != "part" && len(other.Lost) > 0 {
			t.Errorf("%s lost %v", other.Name, other.Lost)
		}
	}
}

func TestDamagedIndexPageGivesEveryRowBack(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	rs.OverwritePage(t, rs.RootPage(t, "part_session_idx"))
	dst, rep := salvageCopy(t, rs.Path)
	sameRows(t, want, rows(t, dst))
	if !rep.Whole() {
		t.Errorf("report is not whole: %+v", rep)
	}
	// The index is rebuilt: a query through it sees every part.
	n := query(t, open(t, dst), "SELECT count(*) FROM part INDEXED BY part_session_idx WHERE session_id > ''")
	if n[0] != itoa(len(want["part"])) {
		t.Errorf("part_session_idx holds %s rows, want %d", n[0], len(want["part"]))
	}
}

func TestDamagedSessionPageNamesTheSessions(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	rs.OverwritePage(t, rs.RootPage(t, "session"))
	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	sameRows(t, want, got, "session")
	if len(got["session"]) != 0 {
		t.Errorf("%d sessions salvaged from a destroyed page", len(got["session"]))
	}
	var ids []string
	for _, line := range want["session"] {
		ids = append(ids, idOf(line))
	}
	slices.Sort(ids)
	if !slices.Equal(rep.MissingSessions, ids) || !slices.Equal(rep.LostSessions, ids) {
		t.Errorf("missing sessions %v, lost %v; want %v", rep.MissingSessions, rep.LostSessions, ids)
	}
	tr := rep.Table("session")
	if n, exact := tr.LostRows(); n != len(ids) || !exact || !slices.Equal(tr.Lost[0].IDs, ids) {
		t.Errorf("session report %+v", tr)
	}
}

func TestDamagedMessagePageKeepsParts(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	rs.OverwritePage(t, rs.RootPage(t, "message"))
	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	sameRows(t, want, got, "message")
	tr := rep.Table("message")
	n, exact := tr.LostRows()
	t.Logf("message: %d of %d rows salvaged, %d lost in sessions %v", len(got["message"]), len(want["message"]), n, rep.LostSessions)
	if len(got["message"])+n != len(want["message"]) || !exact || n == 0 {
		t.Errorf("message: %d salvaged, %d reported lost (exact %v), want %d in all", len(got["message"]), n, exact, len(want["message"]))
	}
	if len(rep.LostSessions) == 0 || len(rep.MissingSessions) != 0 {
		t.Errorf("lost sessions %v, missing %v", rep.LostSessions, rep.MissingSessions)
	}
}

// pageScanned checks a salvage that had to read the raw pages: every
// session, message and part, and the migration rows, back as they were.
func pageScanned(t *testing.T, want map[string][]string, dst string, rep *salvage.Report) map[string][]string {
	t.Helper()
	if rep.Method != salvage.MethodPages {
		t.Fatalf("method %s, want %s", rep.Method, salvage.MethodPages)
	}
	got := rows(t, dst)
	for _, name := range []string{"session", "message", "part", "project", "migration"} {
		if !slices.Equal(got[name], want[name]) {
			t.Errorf("%s: %d rows salvaged, want the %d of the source", name, len(got[name]), len(want[name]))
		}
	}
	if len(rep.MissingSessions) != 0 {
		t.Errorf("missing sessions %v", rep.MissingSessions)
	}
	return got
}

func TestDamagedSchemaPageGoesToThePageScan(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	rs.OverwritePage(t, 1)
	dst, rep := salvageCopy(t, rs.Path)
	got := pageScanned(t, want, dst, rep)
	sameRows(t, want, got)
	t.Logf("notes %v", rep.Notes)
}

func TestDamagedSchemaLeafGoesToThePageScan(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	// sqlite_master spans several pages: destroy one of its leaves, not
	// page 1 (its root).
	ls := leaves(t, rs.Path, "sqlite_schema")
	rs.OverwritePage(t, ls[1].page)
	dst, rep := salvageCopy(t, rs.Path)
	sameRows(t, want, pageScanned(t, want, dst, rep))
}

func TestTruncatedDatabase(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	fi, err := os.Stat(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(rs.Path, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	// Every session row lies in the first half of the recorded file.
	if !slices.Equal(got["session"], want["session"]) {
		t.Errorf("%d of %d sessions salvaged from the first half of the file", len(got["session"]), len(want["session"]))
	}
	for name, g := range got {
		for _, line := range g {
			if !slices.Contains(want[name], line) && name != "migration" {
				t.Errorf("%s: a row the source did not have: %.80s", name, line)
			}
		}
	}
	t.Logf("method %s; kept: session %d/%d, message %d/%d, part %d/%d, migration %d/%d", rep.Method,
		len(got["session"]), len(want["session"]), len(got["message"]), len(want["message"]),
		len(got["part"]), len(want["part"]), len(got["migration"]), len(want["migration"]))
}

func TestDamagedInteriorPageLeavesAreFoundInThePages(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	grow(t, rs.Path, 20)
	want := rows(t, rs.Path)
	leaves(t, rs.Path, "part") // several leaves: the root is an interior page
	rs.OverwritePage(t, rs.RootPage(t, "part"))
	dst, rep := salvageCopy(t, rs.Path)
	sameRows(t, want, rows(t, dst))
	tr := rep.Table("part")
	if len(tr.Lost) != 1 || tr.Lost[0].Rows != len(want["part"]) || tr.Lost[0].FromPages != len(want["part"]) || len(tr.Lost[0].IDs) != 0 {
		t.Errorf("part report %+v", tr)
	}
	if !rep.Whole() || len(rep.LostSessions) != 0 {
		t.Errorf("report whole %v, lost sessions %v", rep.Whole(), rep.LostSessions)
	}
}

func TestDamagedOverflowPageLosesItsRowOnly(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	// One large part, whose data spans several overflow pages.
	big := "prt_ffffffffffffOverflowRow000"
	db, err := sql.Open("sqlite", "file:"+rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data)
		SELECT ?, message_id, session_id, time_created, time_updated, '{"type":"text","text":"' || replace(hex(zeroblob(12000)), '0', 'x') || '"}'
		FROM part LIMIT 1`, big)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := rows(t, rs.Path)
	var first int
	err = open(t, rs.Path).QueryRow(`SELECT pageno FROM dbstat WHERE name = 'part' AND pagetype = 'overflow'
		AND path LIKE '%+000000' ORDER BY pageno DESC LIMIT 1`).Scan(&first)
	if err != nil {
		t.Fatal(err)
	}
	rs.OverwritePage(t, first) // the first page of the chain: its link to the next is gone
	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	sameRows(t, want, got, "part")
	tr := rep.Table("part")
	if len(got["part"]) != len(want["part"])-1 || len(tr.Lost) != 1 || tr.Lost[0].From != tr.Lost[0].To ||
		!slices.Equal(tr.Lost[0].IDs, []string{big}) {
		t.Errorf("part: %d of %d salvaged; report %+v", len(got["part"]), len(want["part"]), tr)
	}
}

func TestDamagedHeaderGoesToThePageScan(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	want := rows(t, rs.Path)
	b, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[16], b[17] = 0x00, 0x03 // a page size that is no power of two
	if err := os.WriteFile(rs.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dst, rep := salvageCopy(t, rs.Path)
	pageScanned(t, want, dst, rep)
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "pages of 4096 bytes assumed") {
		t.Errorf("notes %v", rep.Notes)
	}
}

func TestLostRowsUncountedWithoutAnIndex(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	grow(t, rs.Path, 20)
	want := rows(t, rs.Path)
	ls := leaves(t, rs.Path, "part")
	hit := ls[len(ls)/2]
	// Every index of part destroyed as well as one of its leaves: nothing
	// is left to count or name the lost rows.
	for _, idx := range []string{"sqlite_autoindex_part_1", "part_message_id_id_idx", "part_session_idx"} {
		rs.OverwritePage(t, rs.RootPage(t, idx))
	}
	rs.OverwritePage(t, hit.page)
	dst, rep := salvageCopy(t, rs.Path)
	got := rows(t, dst)
	if len(got["part"]) != len(want["part"])-hit.cells {
		t.Errorf("part: %d of %d salvaged, the page held %d", len(got["part"]), len(want["part"]), hit.cells)
	}
	tr := rep.Table("part")
	if n, exact := tr.LostRows(); exact || n != 0 || len(tr.Lost) != 1 || tr.Lost[0].Rows != -1 || len(tr.Lost[0].IDs) != 0 {
		t.Errorf("part report %+v", tr)
	}
	if rep.Whole() {
		t.Error("a report with an uncounted loss says whole")
	}
}

func TestSalvagedDatabaseLoadsInSessfix(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	rs.OverwritePage(t, 1)
	dst, _ := salvageCopy(t, rs.Path)
	before := storetest.LoadAll(t, storetest.OpenOne(t, realstore.Copy(t, ocrelease.V1_18).Path))
	after := storetest.LoadAll(t, storetest.OpenOne(t, dst))
	if len(after) != len(before) || len(after) == 0 {
		t.Fatalf("%d sessions load from the salvaged database, %d from the recorded one", len(after), len(before))
	}
	for i := range after {
		if after[i].ID != before[i].ID || len(after[i].Messages) != len(before[i].Messages) {
			t.Errorf("session %d: %s with %d messages, want %s with %d", i, after[i].ID, len(after[i].Messages), before[i].ID, len(before[i].Messages))
		}
	}
}
