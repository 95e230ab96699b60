package sqlitedb

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Health reads the database's health read-only (store.HealthChecker):
// SQLite's quick_check (integrity_check when opts.Deep), the sizes of the
// file and its -wal file, its free pages, and the part rows whose data is
// at least opts.Oversized bytes, measured with octet_length(data) so no payload
// is read. A check that cannot run because of the damage is a problem, not
// an error; other failures (a lock held past the busy timeout) are errors.
func (d *DB) Health(ctx context.Context, opts store.HealthOptions) (*store.Health, error) {
	h := &store.Health{Path: d.Path}
	fileSizes(h)
	check := "quick_check"
	if opts.Deep {
		check = "integrity_check"
	}
	h.Check = check
	var damaged *store.DamagedError
	if err := RunCheck(ctx, d.SQL, d.Path, check); errors.As(err, &damaged) {
		h.Problems = damaged.Problems
		h.Affected = affected(ctx, d.SQL, h.Problems)
		if len(h.Affected) == 0 {
			h.Affected = damagedTables(ctx, d.SQL)
		}
	} else if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		v    *int64
	}{{"page_size", &h.PageSize}, {"page_count", &h.PageCount}, {"freelist_count", &h.FreePages}} {
		// The counts are facts about the header: a damaged database may
		// still give them, and a failure leaves them 0.
		_ = d.SQL.QueryRowContext(ctx, "PRAGMA "+p.name).Scan(p.v)
	}
	if opts.Oversized > 0 && !h.Damaged() {
		big, err := oversized(ctx, d.SQL, d.Path, opts.Oversized)
		if err != nil {
			return nil, Error(d.Path, "read", err)
		}
		h.Oversized = big
	}
	return h, nil
}

// fileSizes sets the sizes of the database file and its -wal file.
func fileSizes(h *store.Health) {
	if fi, err := os.Stat(h.Path); err == nil {
		h.Size = fi.Size()
	}
	if fi, err := os.Stat(h.Path + "-wal"); err == nil {
		h.WALSize = fi.Size()
	}
	h.HeaderSize = headerSize(h.Path)
}

// Unopenable is the health of a database SQL cannot open at all (its
// schema page is unreadable, its header damaged): why, and the sizes.
func Unopenable(path, why string) *store.Health {
	h := &store.Health{Path: path, Unopenable: why}
	fileSizes(h)
	return h
}

// oversized lists the part rows whose data is at least limit bytes; none
// when the database has no part table (a native OpenCode 2 database).
func oversized(ctx context.Context, db *sql.DB, path string, limit int64) ([]store.Oversized, error) {
	tables, err := Names(ctx, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'part'`)
	if err != nil || !tables["part"] {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid, id, message_id, session_id, octet_length(data) FROM part WHERE octet_length(data) >= ? ORDER BY octet_length(data) DESC, id`, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.Oversized
	for rows.Next() {
		var o store.Oversized
		var rowid int64
		if err := rows.Scan(&rowid, &o.PartID, &o.MessageID, &o.SessionID, &o.Bytes); err != nil {
			return nil, err
		}
		o.Loc = store.Location{Path: path, Table: "part", RowID: rowid}
		out = append(out, o)
	}
	return out, rows.Err()
}

var (
	treeRe  = regexp.MustCompile(`[Tt]ree (\d+)`)
	indexRe = regexp.MustCompile(`index (\w+)`)
)

// affected names the tables and indexes the check's problems are about:
// those named, and those whose root page a "Tree N" problem gives (when
// the schema can still be read). Sorted.
func affected(ctx context.Context, db *sql.DB, problems []string) []string {
	names := map[string]bool{}
	roots := map[int]bool{}
	for _, p := range problems {
		for _, m := range treeRe.FindAllStringSubmatch(p, -1) {
			if n, err := strconv.Atoi(m[1]); err == nil {
				roots[n] = true
			}
		}
		for _, m := range indexRe.FindAllStringSubmatch(p, -1) {
			names[m[1]] = true
		}
	}
	if len(roots) > 0 {
		if rows, err := db.QueryContext(ctx, `SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0`); err == nil {
			for rows.Next() {
				var name string
				var root int
				if rows.Scan(&name, &root) == nil && roots[root] {
					names[name] = true
				}
			}
			rows.Close()
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// damagedTables checks the schema's tables one by one (quick_check of
// each, with its indexes) and names those that fail: what the whole check
// says when it stops on the first damaged page without naming it. Nil when
// the schema cannot be read.
func damagedTables(ctx context.Context, db *sql.DB) []string {
	names, err := Names(ctx, db, `SELECT name FROM sqlite_schema WHERE type = 'table' AND rootpage > 0 ORDER BY name`)
	if err != nil {
		return nil
	}
	var out []string
	for n := range names {
		var line string
		err := db.QueryRowContext(ctx, `PRAGMA quick_check("`+strings.ReplaceAll(n, `"`, `""`)+`")`).Scan(&line)
		if err != nil || line != "ok" {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// headerSize is the database size the file's header gives (its page size
// times its page count), 0 when the header cannot be read or holds none:
// when its page size is not one SQLite writes (a power of two from 512 to
// 65536), or its page count is stale (SQLite trusts the count only while
// the "version-valid-for" number equals the change counter), as in a
// damaged header.
func headerSize(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var b [100]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0
	}
	size := int64(binary.BigEndian.Uint16(b[16:18]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size&(size-1) != 0 || !bytes.Equal(b[24:28], b[92:96]) {
		return 0
	}
	return size * int64(binary.BigEndian.Uint32(b[28:32]))
}

// trimProblem is one line of a check's report, trimmed.
func trimProblem(s string) string { return strings.TrimSpace(s) }

// Health reads the database's health (DB.Health).
func (s *V1) Health(ctx context.Context, opts store.HealthOptions) (*store.Health, error) {
	return s.d.Health(ctx, opts)
}

// Damaged is a database SQL cannot open at all (its schema page or header
// is damaged) as a store: it lists no session, and its Health says why, so
// a scan reports the damage (SF501) rather than stopping.
type Damaged struct {
	info store.Info
	why  string
}

// NewDamaged is the store of the database at path that opening failed on
// with the driver's text why.
func NewDamaged(info store.Info, why string) *Damaged { return &Damaged{info: info, why: why} }

func (s *Damaged) Info() store.Info { return s.info }

// List fails with the damage (a *store.DamagedError): no session can be
// read through SQL. scan reports it as SF501 instead; the other commands
// stop on it.
func (s *Damaged) List(context.Context) ([]store.SessionRef, error) { return nil, s.err() }

func (s *Damaged) Load(context.Context, store.SessionRef) (*store.Session, error) {
	return nil, s.err()
}

func (s *Damaged) err() error {
	return &store.DamagedError{Path: s.info.Path, Check: "open", Problems: []string{s.why}}
}

func (s *Damaged) Activity() store.Activity { return Activity(s.info.Path) }

func (s *Damaged) Close() error { return nil }

func (s *Damaged) Health(context.Context, store.HealthOptions) (*store.Health, error) {
	return Unopenable(s.info.Path, s.why), nil
}
