package salvage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
)

// entry is one row of sqlite_master.
type entry struct {
	typ, name, table, sql string
}

// readSchema reads sqlite_master in its order.
func readSchema(ctx context.Context, db *sql.DB) ([]entry, error) {
	rows, err := db.QueryContext(ctx, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []entry
	for rows.Next() {
		var e entry
		if err := rows.Scan(&e.typ, &e.name, &e.table, &e.sql); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("sqlite_master is empty")
	}
	return out, nil
}

// layoutPragmas must be set before the first table is created.
var layoutPragmas = []string{"page_size", "auto_vacuum", "encoding"}

// valuePragmas are set at the end.
var valuePragmas = []string{"user_version", "application_id"}

// copyPragmas copies the pragmas names from in to out; one that cannot be
// read is left at its default, with a note.
func copyPragmas(ctx context.Context, in, out *sql.DB, names []string, rep *Report) error {
	for _, p := range names {
		var v string
		if err := in.QueryRowContext(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			rep.Notes = append(rep.Notes, "PRAGMA "+p+" could not be read: left at its default")
			continue
		}
		if p == "encoding" {
			v = "'" + v + "'"
		}
		if _, err := out.ExecContext(ctx, "PRAGMA "+p+" = "+v); err != nil {
			return fmt.Errorf("salvage: set %s: %w", p, err)
		}
	}
	return nil
}

// copySQL recreates schema in out and copies every table's rows.
func copySQL(ctx context.Context, src string, in, out *sql.DB, schema []entry, rep *Report) error {
	if err := copyPragmas(ctx, in, out, layoutPragmas, rep); err != nil {
		return err
	}
	var tables []string
	sequence := false
	for _, e := range schema {
		switch {
		case e.typ != "table":
			continue
		case e.name == "sqlite_sequence":
			sequence = true
			continue
		case strings.HasPrefix(e.name, "sqlite_"):
			rep.Skipped = append(rep.Skipped, e.name+": SQLite's own table, rebuilt by SQLite")
			continue
		case strings.HasPrefix(strings.ToUpper(e.sql), "CREATE VIRTUAL"):
			rep.Skipped = append(rep.Skipped, e.name+": a virtual table")
			continue
		}
		if _, err := out.ExecContext(ctx, e.sql); err != nil {
			rep.Skipped = append(rep.Skipped, e.name+": "+oneLine(err))
			continue
		}
		tables = append(tables, e.name)
	}
	if sequence {
		if _, err := out.ExecContext(ctx, "DELETE FROM sqlite_sequence"); err == nil {
			tables = append(tables, "sqlite_sequence")
		}
	}
	for _, t := range tables {
		tr, err := copyTable(ctx, in, out, t)
		if err != nil {
			return err
		}
		rep.Tables = append(rep.Tables, tr)
	}
	if err := recoverFromPages(ctx, src, out, rep); err != nil {
		return err
	}
	for i := range rep.Tables {
		if len(rep.Tables[i].Lost) > 0 {
			lostIDs(ctx, in, out, schema, &rep.Tables[i])
		}
	}
	for _, typ := range []string{"index", "trigger", "view"} {
		for _, e := range schema {
			if e.typ != typ || e.sql == "" {
				continue
			}
			if _, err := out.ExecContext(ctx, e.sql); err != nil {
				rep.Skipped = append(rep.Skipped, e.name+": "+oneLine(err))
			}
		}
	}
	return copyPragmas(ctx, in, out, valuePragmas, rep)
}

// columns are a table's insertable columns, and whether one of them is
// the rowid (an INTEGER PRIMARY KEY).
func columns(ctx context.Context, db *sql.DB, table string) (cols []string, alias bool, err error) {
	rows, err := db.QueryContext(ctx, "SELECT name, upper(type), pk FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	pks := 0
	intPK := false
	for rows.Next() {
		var name, typ string
		var pk int
		if err := rows.Scan(&name, &typ, &pk); err != nil {
			return nil, false, err
		}
		cols = append(cols, name)
		if pk > 0 {
			pks++
			intPK = typ == "INTEGER"
		}
	}
	return cols, pks == 1 && intPK, rows.Err()
}

// tableCopy copies one table in one transaction of out.
type tableCopy struct {
	in     *sql.DB
	ins    *sql.Stmt
	name   string
	read   string // the rows from a rowid on, in rowid order
	probe  string // the first rowid from a rowid on
	width  int    // columns read after the rowid
	alias  bool   // the rowid is a column: not inserted twice
	report TableReport
}

// copyTable copies table from in to out in rowid order. A read that fails
// part-way resumes after the first rowid that can be read again; the rows
// in between are a lost Range.
func copyTable(ctx context.Context, in, out *sql.DB, table string) (TableReport, error) {
	cols, alias, err := columns(ctx, out, table)
	if err != nil {
		return TableReport{}, fmt.Errorf("salvage: columns of %s: %w", table, err)
	}
	q := quote(table)
	sel := make([]string, len(cols))
	names := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "+" + quote(c) // no declared type: values as stored
		names[i] = quote(c)
		marks[i] = "?"
	}
	if !alias {
		names = append([]string{"rowid"}, names...)
		marks = append(marks, "?")
	}
	tx, err := out.BeginTx(ctx, nil)
	if err != nil {
		return TableReport{}, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, "INSERT INTO "+q+" ("+strings.Join(names, ", ")+") VALUES ("+strings.Join(marks, ", ")+")")
	if err != nil {
		return TableReport{}, fmt.Errorf("salvage: insert into %s: %w", table, err)
	}
	c := &tableCopy{in: in, ins: ins, name: table, width: len(cols), alias: alias,
		read:   "SELECT rowid, " + strings.Join(sel, ", ") + " FROM " + q + " WHERE rowid >= ? ORDER BY rowid",
		probe:  "SELECT rowid FROM " + q + " WHERE rowid >= ? ORDER BY rowid LIMIT 1",
		report: TableReport{Name: table}}
	if _, err := in.ExecContext(ctx, "SELECT rowid FROM "+q+" LIMIT 0"); err != nil {
		return c.withoutRowid(ctx, tx, cols)
	}
	if err := c.run(ctx); err != nil {
		return TableReport{}, err
	}
	if err := tx.Commit(); err != nil {
		return TableReport{}, fmt.Errorf("salvage: write %s: %w", table, err)
	}
	return c.report, nil
}

// run copies from the first rowid to the last, around what cannot be read.
func (c *tableCopy) run(ctx context.Context) error {
	next := int64(math.MinInt64)
	for {
		last, n, readErr, err := c.scan(ctx, next)
		if err != nil {
			return err
		}
		if readErr == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		start := next
		if n > 0 {
			if last == math.MaxInt64 {
				return nil
			}
			start = last + 1
		}
		r, found, err := c.probeAt(ctx, start)
		if err == nil {
			if !found {
				return nil // the failure was past the last row
			}
			// The row's cell is there but its content cannot be read
			// (an overflow page): only that row is lost.
			c.lose(r, r)
			if r == math.MaxInt64 {
				return nil
			}
			next = r + 1
			continue
		}
		resume, ok := c.firstReadable(ctx, start)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !ok {
			c.lose(start, openEnded)
			return nil
		}
		c.lose(start, resume-1)
		next = resume
	}
}

func (c *tableCopy) lose(from, to int64) {
	c.report.Lost = append(c.report.Lost, Range{From: from, To: to, Rows: -1})
}

// scan copies the rows from rowid next on until the end or the first read
// error (readErr); err is a failure to write out.
func (c *tableCopy) scan(ctx context.Context, next int64) (last int64, n int, readErr, err error) {
	rows, readErr := c.in.QueryContext(ctx, c.read, next)
	if readErr != nil {
		return 0, 0, readErr, nil
	}
	defer rows.Close()
	vals := make([]any, c.width+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return last, n, err, nil
		}
		rowid, ok := vals[0].(int64)
		if !ok || n > 0 && rowid <= last || rowid < next {
			return last, n, fmt.Errorf("%s: rowids out of order", c.name), nil
		}
		args := vals
		if c.alias {
			args = vals[1:]
		}
		if _, err := c.ins.ExecContext(ctx, args...); err != nil {
			if !isConstraint(err) {
				return last, n, nil, fmt.Errorf("salvage: write %s: %w", c.name, err)
			}
			c.report.Rejected = append(c.report.Rejected, rowid)
		} else {
			c.report.Read++
		}
		last, n = rowid, n+1
	}
	return last, n, rows.Err(), nil
}

// probeAt reads the first rowid at or after x without its row's content.
func (c *tableCopy) probeAt(ctx context.Context, x int64) (rowid int64, found bool, err error) {
	err = c.in.QueryRowContext(ctx, c.probe, x).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return rowid, err == nil, err
}

// firstReadable finds the smallest x > start from which the table can be
// read again (probeAt succeeds), by steps doubling from start and then
// bisecting the last step, down to a single rowid.
func (c *tableCopy) firstReadable(ctx context.Context, start int64) (int64, bool) {
	ok := func(x int64) bool {
		_, _, err := c.probeAt(ctx, x)
		return err == nil
	}
	room := uint64(math.MaxInt64) - uint64(start) // distance to the largest rowid
	lo, hi := start, int64(0)
	found := false
	for step := uint64(1); step != 0 && step <= room; step <<= 1 {
		if ctx.Err() != nil {
			return 0, false
		}
		x := int64(uint64(start) + step)
		if ok(x) {
			hi, found = x, true
			break
		}
		lo = x
	}
	if !found {
		if room > 0 && ok(math.MaxInt64) {
			hi, found = math.MaxInt64, true
		} else {
			return 0, false
		}
	}
	// ok(lo) is false, ok(hi) true.
	for uint64(hi)-uint64(lo) > 1 {
		mid := int64(uint64(lo) + (uint64(hi)-uint64(lo))/2)
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// withoutRowid copies a WITHOUT ROWID table in one scan: rows after a read
// error are lost, as one range without rowids.
func (c *tableCopy) withoutRowid(ctx context.Context, tx *sql.Tx, cols []string) (TableReport, error) {
	sel := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, col := range cols {
		sel[i], marks[i] = "+"+quote(col), "?"
	}
	ins, err := tx.PrepareContext(ctx, "INSERT INTO "+quote(c.name)+" VALUES ("+strings.Join(marks, ", ")+")")
	if err != nil {
		return TableReport{}, fmt.Errorf("salvage: insert into %s: %w", c.name, err)
	}
	rows, err := c.in.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+quote(c.name))
	if err == nil {
		defer rows.Close()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err = rows.Scan(ptrs...); err != nil {
				break
			}
			if _, werr := ins.ExecContext(ctx, vals...); werr != nil && !isConstraint(werr) {
				return TableReport{}, fmt.Errorf("salvage: write %s: %w", c.name, werr)
			}
			c.report.Read++
		}
		if err == nil {
			err = rows.Err()
		}
	}
	if err != nil {
		c.lose(math.MinInt64, openEnded)
	}
	if err := tx.Commit(); err != nil {
		return TableReport{}, fmt.Errorf("salvage: write %s: %w", c.name, err)
	}
	return c.report, nil
}
