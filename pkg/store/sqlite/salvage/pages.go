package salvage

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// idPrefixes are the prefixes OpenCode's ids carry, by table and column:
// a record of one of these tables must have them.
var idPrefixes = map[string]map[string]string{
	"session": {"id": "ses_"},
	"message": {"id": "msg_", "session_id": "ses_"},
	"part":    {"id": "prt_", "message_id": "msg_", "session_id": "ses_"},
	"todo":    {"session_id": "ses_"},
	"event":   {"id": "evt_"},
}

// idPatterns are what ids of tables without a prefix look like: a
// migration is named after its time (20260127222353_familiar_lady_ursula).
var idPatterns = map[string]map[string]*regexp.Regexp{
	migrationTable: {"id": regexp.MustCompile(`^[0-9]{14}_`)},
}

// shape is what a table's records look like.
type shape struct {
	name  string
	cols  []colShape
	alias int // the INTEGER PRIMARY KEY column (stored as null), or -1
}

type colShape struct {
	name, typ, prefix string
	pattern           *regexp.Regexp
	notNull           bool
}

// fits reports whether a record can be a row of the table.
func (s *shape) fits(vals []any) bool {
	if len(vals) != len(s.cols) {
		return false
	}
	for i, c := range s.cols {
		v := vals[i]
		if v == nil {
			if c.notNull && i != s.alias {
				return false
			}
			continue
		}
		switch c.typ {
		case "TEXT":
			str, ok := v.(string)
			if !ok || !strings.HasPrefix(str, c.prefix) || c.pattern != nil && !c.pattern.MatchString(str) {
				return false
			}
		case "INTEGER":
			if _, ok := v.(int64); !ok {
				return false
			}
		case "REAL":
			switch v.(type) {
			case int64, float64:
			default:
				return false
			}
		}
	}
	return true
}

// hinted reports whether the table's ids have known prefixes.
func (s *shape) hinted() bool { return idPrefixes[s.name] != nil || idPatterns[s.name] != nil }

func shapes(ctx context.Context, out *sql.DB, tables []string) ([]*shape, error) {
	var all []*shape
	for _, t := range tables {
		rows, err := out.QueryContext(ctx, `SELECT name, upper(type), "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, t)
		if err != nil {
			return nil, err
		}
		s := &shape{name: t, alias: -1}
		pks, intPK := 0, -1
		for rows.Next() {
			var c colShape
			var pk int
			if err := rows.Scan(&c.name, &c.typ, &c.notNull, &pk); err != nil {
				rows.Close()
				return nil, err
			}
			c.prefix, c.pattern = idPrefixes[t][c.name], idPatterns[t][c.name]
			if pk > 0 {
				pks++
				if c.typ == "INTEGER" {
					intPK = len(s.cols)
				}
			}
			s.cols = append(s.cols, c)
		}
		rows.Close()
		if pks == 1 {
			s.alias = intPK
		}
		all = append(all, s)
	}
	return all, nil
}

// placePage is the table every cell of a leaf page fits: the one table
// with known id prefixes that fits, else the only table that fits; nil
// when none or several do.
func placePage(all []*shape, cells []cell) *shape {
	var fit, hinted []*shape
	for _, s := range all {
		ok := true
		for _, c := range cells {
			if !s.fits(c.values) {
				ok = false
				break
			}
		}
		if ok {
			fit = append(fit, s)
			if s.hinted() {
				hinted = append(hinted, s)
			}
		}
	}
	switch {
	case len(hinted) == 1:
		return hinted[0]
	case len(fit) == 1:
		return fit[0]
	}
	return nil
}

// copyPages fills out from the raw pages of src: OpenCode 1.18.33's
// schema, then every table b-tree leaf page's rows given to the table
// they fit.
func copyPages(ctx context.Context, src string, out *sql.DB, rep *Report) error {
	pf, err := openPages(src)
	if err != nil {
		return fmt.Errorf("salvage: read %s: %w", src, err)
	}
	defer pf.Close()
	if !pf.headerOK {
		rep.Notes = append(rep.Notes, "the file header cannot be read: pages of 4096 bytes assumed")
	}
	if _, err := out.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", pf.size)); err != nil {
		return fmt.Errorf("salvage: set page_size: %w", err)
	}
	rep.Notes = append(rep.Notes, "the schema is OpenCode "+KnownVersion+"'s, embedded in sessfix")
	all, later, err := createKnownTables(ctx, out)
	if err != nil {
		return err
	}
	reports := map[*shape]*TableReport{}
	for _, sh := range all {
		rep.Tables = append(rep.Tables, TableReport{Name: sh.name})
	}
	for i, sh := range all {
		reports[sh] = &rep.Tables[i]
	}
	w := &pageWriter{out: out}
	defer w.rollback()
	var leaves, unplacedPages, unplacedRows, badCells int
	for n := 1; n <= pf.count; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if pf.freelist[n] {
			continue
		}
		cells, bad, ok := pf.leafCells(n)
		if !ok {
			continue
		}
		leaves++
		badCells += bad
		if len(cells) == 0 {
			continue
		}
		sh := placePage(all, cells)
		if sh == nil {
			unplacedPages++
			unplacedRows += len(cells)
			continue
		}
		tr := reports[sh]
		for _, c := range cells {
			inserted, err := w.insert(ctx, sh, c)
			if err != nil {
				return err
			}
			if inserted {
				tr.Read++
			} else {
				tr.Rejected = append(tr.Rejected, c.rowid)
			}
		}
	}
	if err := w.commit(); err != nil {
		return err
	}
	rep.Unplaced = unplacedRows
	rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d pages are table leaves; %d rows on %d of them fit no known table (sqlite_master's among them); %d cells could not be decoded",
		leaves, pf.count, unplacedRows, unplacedPages, badCells))
	total := int64(0)
	for _, tr := range rep.Tables {
		total += tr.Read
	}
	if total == 0 {
		return fmt.Errorf("salvage %s: no page of the file holds rows of OpenCode's tables", src)
	}
	if err := addMigrations(ctx, out, rep); err != nil {
		return err
	}
	for _, stmt := range later {
		if _, err := out.ExecContext(ctx, stmt); err != nil {
			rep.Skipped = append(rep.Skipped, firstLine(stmt)+": "+oneLine(err))
		}
	}
	if pf.headerOK {
		if _, err := out.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", pf.userVersion, pf.appID)); err != nil {
			return fmt.Errorf("salvage: set user_version: %w", err)
		}
	}
	return nil
}

// createKnownTables creates the embedded schema's tables in out and
// returns their shapes, and the other statements (indexes, ...), which are
// run once the rows are in.
func createKnownTables(ctx context.Context, out *sql.DB) (all []*shape, later []string, err error) {
	var tables []string
	for _, stmt := range knownStatements() {
		if !strings.HasPrefix(stmt, "CREATE TABLE") {
			later = append(later, stmt)
			continue
		}
		if _, err := out.ExecContext(ctx, stmt); err != nil {
			return nil, nil, fmt.Errorf("salvage: create the embedded schema: %w", err)
		}
		name, _ := tableName(stmt)
		tables = append(tables, name)
	}
	all, err = shapes(ctx, out, tables)
	if err != nil {
		return nil, nil, fmt.Errorf("salvage: read the embedded schema: %w", err)
	}
	return all, later, nil
}

// pageWriter inserts the rows the page scan finds as it finds them, so
// no more than a batch of them is held: a transaction per batchRows rows,
// one prepared statement per table.
type pageWriter struct {
	out   *sql.DB
	tx    *sql.Tx
	stmts map[*shape]*sql.Stmt
	n     int
}

const batchRows = 10000

// insert writes one row; inserted is false when a constraint refused it
// (a rowid or key seen twice: a stale copy of a page).
func (w *pageWriter) insert(ctx context.Context, s *shape, c cell) (inserted bool, err error) {
	if w.tx == nil {
		if w.tx, err = w.out.BeginTx(ctx, nil); err != nil {
			return false, err
		}
		w.stmts = map[*shape]*sql.Stmt{}
	}
	ins := w.stmts[s]
	if ins == nil {
		names := []string{"rowid"}
		marks := []string{"?"}
		for _, c := range s.cols {
			names, marks = append(names, quote(c.name)), append(marks, "?")
		}
		ins, err = w.tx.PrepareContext(ctx, "INSERT INTO "+quote(s.name)+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(marks, ", ")+")")
		if err != nil {
			return false, fmt.Errorf("salvage: insert into %s: %w", s.name, err)
		}
		w.stmts[s] = ins
	}
	args := append([]any{c.rowid}, c.values...)
	if s.alias >= 0 {
		args[1+s.alias] = c.rowid
	}
	if _, err := ins.ExecContext(ctx, args...); err != nil {
		if !isConstraint(err) {
			return false, fmt.Errorf("salvage: write %s: %w", s.name, err)
		}
		return false, nil
	}
	if w.n++; w.n%batchRows == 0 {
		return true, w.commit()
	}
	return true, nil
}

// commit ends the open transaction, if any.
func (w *pageWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	err := w.tx.Commit()
	w.tx = nil
	if err != nil {
		return fmt.Errorf("salvage: write: %w", err)
	}
	return nil
}

// rollback drops the open transaction, if any (after an error).
func (w *pageWriter) rollback() {
	if w.tx != nil {
		w.tx.Rollback()
		w.tx = nil
	}
}

// addMigrations writes the embedded migration rows the pages did not give
// back, so that OpenCode finds its migrations done and does not run them
// again on the tables it already has.
func addMigrations(ctx context.Context, out *sql.DB, rep *Report) error {
	added := 0
	for _, line := range strings.Split(strings.TrimSpace(knownMigrations), "\n") {
		id, at, ok := strings.Cut(line, "\t")
		if !ok {
			continue
		}
		res, err := out.ExecContext(ctx, "INSERT OR IGNORE INTO "+quote(migrationTable)+" (id, time_completed) VALUES (?, CAST(? AS INTEGER))", id, at)
		if err != nil {
			return fmt.Errorf("salvage: write %s: %w", migrationTable, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			added++
		}
	}
	if added > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d rows of %s were not found in the pages and were written from OpenCode %s's", added, migrationTable, KnownVersion))
	}
	return nil
}

// tableName is the quoted name a CREATE TABLE statement creates.
func tableName(stmt string) (string, bool) {
	rest := strings.TrimPrefix(stmt, "CREATE TABLE ")
	if rest == "" {
		return "", false
	}
	q := rest[0]
	if q != '`' && q != '"' {
		name, _, _ := strings.Cut(rest, " ")
		return name, true
	}
	end := strings.IndexByte(rest[1:], q)
	if end < 0 {
		return "", false
	}
	return rest[1 : 1+end], true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
