// Package oc2fixture builds the OpenCode 2 database fixtures in
// testdata/opencode2 from the real OpenCode 1.18.33 database in
// testdata/real/opencode-1.18.33 and from the 2.x schema in OpenCode's
// source (see ddl.go, importer.go and testdata/opencode2/README.md). No
// OpenCode 2 build can be installed to make them for real; they follow the
// documented schema, and nothing may be repaired in a 2.x table on their
// evidence alone.
//
// Build is deterministic: ids and times are fixed, and the same base gives
// the same rows (Dump compares them; the files' bytes may differ across
// SQLite driver versions).
package oc2fixture

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/sessfix/sessfix/internal/opencodetest"
)

// Fixtures, each an OpenCode data dir holding opencode.db.
const (
	// AfterImport: 1.18.33's sessions imported into the 2.x tables, the
	// import recorded as completed in kv, then two 1.x sessions created
	// after it (1.x tables only; #49641, #50130).
	AfterImport = "after-import"
	// RejectedRows: a completed import that skipped 1.x rows it could not
	// decode (#42671): their sessions are in session_v2 without them, or
	// missing.
	RejectedRows = "rejected-rows"
	// Native: a database OpenCode 2 created, no 1.x tables, with sessions of
	// every message type.
	Native = "native"
)

// Names lists the fixtures.
var Names = []string{AfterImport, RejectedRows, Native}

// ImportTime is when the import of AfterImport ran (epoch ms), a day after
// the recording. RejectedImportTime is when RejectedRows' ran: after its
// damaged sessions were written (two days after the recording, and an hour
// later).
const (
	ImportTime         = int64(1795363200000)
	RejectedImportTime = ImportTime + After
)

// After is how much later than the recording the sessions created after
// the import are.
const After = int64(2 * 86400000)

// Build writes fixture name to path (which must not exist), from the 1.18.33
// database at base. It returns the importer's warnings (for RejectedRows:
// the rows it skipped).
func Build(name, base, path string) ([]Warning, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s exists", path)
	}
	if name != Native {
		b, err := os.ReadFile(base)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(0)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var warnings []Warning
	switch name {
	case AfterImport:
		if err = execAll(db, upgrade); err == nil {
			if warnings, err = importAll(db, ImportTime); err == nil {
				err = cloneSession(db, realLoop, "after-import-1", After, nil)
			}
			if err == nil {
				err = cloneSession(db, realPlain, "after-import-2", After+3600000, nil)
			}
		}
	case RejectedRows:
		if err = execAll(db, upgrade); err == nil {
			if err = damage(db); err == nil {
				warnings, err = importAll(db, RejectedImportTime)
			}
		}
	case Native:
		if err = execAll(db, native); err == nil {
			err = nativeSessions(db)
		}
	default:
		err = fmt.Errorf("no fixture %q", name)
	}
	if err == nil {
		err = execAll(db, []string{"PRAGMA journal_mode=DELETE", "VACUUM"})
	}
	return warnings, err
}

// Sessions of testdata/real/opencode-1.18.33.
const (
	realPlain = "ses_e012acd97ffeUavLGQWWTi4jHW"
	realLoop  = "ses_e012a9fbfffeKtIFkrDCzeMk55"
	realMulti = "ses_e012a6510ffemP4Gukdz1ZnYpe"
)

func execAll(db *sql.DB, stmts []string) error {
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%.60s: %w", s, err)
		}
	}
	return nil
}

// importAll runs the 2.x import over every 1.x session at time at, as
// run() does: the old event rows are cleared, each session is copied into
// session_v2 (reassigned to the global project when its project row is
// missing) with its messages projected, its event watermark set, and the
// import is then recorded as completed.
func importAll(db *sql.DB, at int64) ([]Warning, error) {
	if err := execAll(db, []string{
		"DELETE FROM event",
		fmt.Sprintf("INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, time_active, sandboxes) VALUES ('global', '/', %d, %d, %d, '[]')", at, at, at),
	}); err != nil {
		return nil, err
	}
	ids, err := opencodetest.QueryIDs(db, "SELECT id FROM session ORDER BY id DESC")
	if err != nil {
		return nil, err
	}
	var all []Warning
	for _, id := range ids {
		var project, agent, model sql.NullString
		if err := db.QueryRow(`SELECT project_id, agent, model FROM session WHERE id = ?`, id).Scan(&project, &agent, &model); err != nil {
			return nil, err
		}
		var known int
		_ = db.QueryRow(`SELECT count(*) FROM project WHERE id = ?`, project.String).Scan(&known)
		pid := project.String
		if known == 0 {
			pid = "global"
			all = append(all, Warning{Reason: "reassigned-project", SessionID: id})
		}
		if _, err := db.Exec(`INSERT OR IGNORE INTO session_v2 (
			id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url,
			summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost,
			tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write,
			revert, permission, agent, model, time_created, time_updated, time_compacting, time_archived)
			SELECT id, ?, workspace_id, parent_id, slug, directory, path, title, version, share_url,
			summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost,
			tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write,
			revert, NULL, agent, model, time_created, time_updated, time_compacting, time_archived
			FROM session WHERE id = ?`, pid, id); err != nil {
			return nil, err
		}
		msgs, err := sources(db, `SELECT id, '', session_id, time_created, time_updated, data FROM message WHERE session_id = ?`, id)
		if err != nil {
			return nil, err
		}
		parts, err := sources(db, `SELECT id, message_id, session_id, time_created, time_updated, data FROM part WHERE session_id = ?`, id)
		if err != nil {
			return nil, err
		}
		out, sess, warnings := transform(id, agent.String, model.String, msgs, parts)
		all = append(all, warnings...)
		for _, m := range out {
			data, _ := json.Marshal(m.data)
			if _, err := db.Exec(`INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				m.id, id, m.typ, m.seq, m.created, m.updated, string(data)); err != nil {
				return nil, err
			}
		}
		if _, err := db.Exec(`INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, ?) ON CONFLICT(aggregate_id) DO UPDATE SET seq = excluded.seq, owner_id = NULL`,
			id, sess["watermark"]); err != nil {
			return nil, err
		}
	}
	_, err = db.Exec(`INSERT INTO kv (key, value, time_created, time_updated) VALUES ('migration.v1-v2', '{"phase":"completed"}', ?, ?)`, at, at)
	return all, err
}

func sources(db *sql.DB, q string, args ...any) ([]source, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []source
	for rows.Next() {
		var s source
		if err := rows.Scan(&s.id, &s.messageID, &s.sessionID, &s.created, &s.updated, &s.data); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

var idRe = regexp.MustCompile(`^(ses|msg|prt)_([0-9a-f]{12})([0-9A-Za-z]{14})$`)

// shiftID moves an OpenCode id by delta milliseconds (session ids count
// down) and marks its random tail with tag, so copies never collide.
func shiftID(id string, delta int64, tag string) string {
	m := idRe.FindStringSubmatch(id)
	if m == nil {
		return id
	}
	n, _ := strconv.ParseInt(m[2], 16, 64)
	if m[1] == "ses" {
		n -= delta * 4096
	} else {
		n += delta * 4096
	}
	tail := (tag + m[3])[:14]
	return fmt.Sprintf("%s_%012x%s", m[1], n&(1<<48-1), tail)
}

// cloneSession copies a 1.x session (its session, message and part rows)
// under new ids, delta milliseconds later: what 1.18 would have written
// had the same conversation happened then. edit may change the copy's
// bodies (by the original message or part id) before they are written.
func cloneSession(db *sql.DB, from, tag string, delta int64, edit func(table, origID string, data string) string) error {
	tag = tagOf(tag)
	ids := map[string]string{from: shiftID(from, delta, tag)}
	msgIDs, err := opencodetest.QueryIDs(db, `SELECT id FROM message WHERE session_id = ?`, from)
	if err != nil {
		return err
	}
	partIDs, err := opencodetest.QueryIDs(db, `SELECT id FROM part WHERE session_id = ?`, from)
	if err != nil {
		return err
	}
	for _, id := range slices.Concat(msgIDs, partIDs) {
		ids[id] = shiftID(id, delta, tag)
	}
	remap := func(data string) string {
		var v any
		if json.Unmarshal([]byte(data), &v) != nil {
			return data
		}
		b, _ := json.Marshal(shiftValue(v, ids, delta))
		return string(b)
	}
	stmts := []struct {
		q    string
		args []any
	}{
		{`CREATE TEMP TABLE clone AS SELECT * FROM session WHERE id = ?`, []any{from}},
		{`UPDATE clone SET id = ?, slug = ?, time_created = time_created + ?, time_updated = time_updated + ?`, []any{ids[from], strings.ToLower(tag), delta, delta}},
		{`INSERT INTO session SELECT * FROM clone`, nil},
		{`DROP TABLE clone`, nil},
	}
	for _, s := range stmts {
		if _, err := db.Exec(s.q, s.args...); err != nil {
			return fmt.Errorf("clone %s: %w", from, err)
		}
	}
	for _, table := range []string{"message", "part"} {
		rows, err := sources(db, `SELECT id, `+map[string]string{"message": "''", "part": "message_id"}[table]+`, session_id, time_created, time_updated, data FROM `+table+` WHERE session_id = ?`, from)
		if err != nil {
			return err
		}
		for _, r := range rows {
			data := remap(r.data)
			if edit != nil {
				data = edit(table, r.id, data)
			}
			if data == "" {
				continue // the edit dropped the row
			}
			if table == "message" {
				_, err = db.Exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)`,
					ids[r.id], ids[from], r.created+delta, r.updated+delta, data)
			} else {
				_, err = db.Exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)`,
					ids[r.id], ids[r.messageID], ids[from], r.created+delta, r.updated+delta, data)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// shiftValue maps ids and moves epoch-millisecond times in a JSON body.
func shiftValue(v any, ids map[string]string, delta int64) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = shiftValue(e, ids, delta)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = shiftValue(e, ids, delta)
		}
		return x
	case string:
		if n, ok := ids[x]; ok {
			return n
		}
		return x
	case float64:
		if x > 1.7e12 && x < 2e12 {
			return x + float64(delta)
		}
		return x
	}
	return v
}

// CloneID is the id cloneSession gives a copy of id.
func CloneID(id, tag string, delta int64) string { return shiftID(id, delta, tagOf(tag)) }

// tagOf turns "after-import-1" into "AfterImport1", an id tail.
func tagOf(tag string) string {
	var b strings.Builder
	for _, w := range strings.Split(tag, "-") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
