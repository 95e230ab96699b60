package salvage

import (
	"context"
	"database/sql"
	"fmt"
)

// recoverFromPages looks in the raw pages of src for the rows SQLite could
// not reach: a damaged interior page cuts off every leaf below it though
// the leaves themselves are whole. A leaf page whose rows all fit one
// table with lost ranges (the same test the page scan makes) gives back
// its rows whose rowids lie in a lost range; a row the table already has
// is left alone. The rows found are counted in Read and in the range's
// FromPages.
func recoverFromPages(ctx context.Context, src string, out *sql.DB, rep *Report) error {
	lost := map[string]*TableReport{}
	var names []string
	for i := range rep.Tables {
		names = append(names, rep.Tables[i].Name)
		if len(rep.Tables[i].Lost) > 0 {
			lost[rep.Tables[i].Name] = &rep.Tables[i]
		}
	}
	if len(lost) == 0 {
		return nil
	}
	pf, err := openPages(src)
	if err != nil {
		rep.Notes = append(rep.Notes, "the raw pages could not be read: "+oneLine(err))
		return nil
	}
	defer pf.Close()
	all, err := shapes(ctx, out, names)
	if err != nil {
		return fmt.Errorf("salvage: read the new schema: %w", err)
	}
	w := &pageWriter{out: out}
	defer w.rollback()
	for n := 1; n <= pf.count; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if pf.freelist[n] {
			continue
		}
		cells, _, ok := pf.leafCells(n)
		if !ok || len(cells) == 0 {
			continue
		}
		s := placePage(all, cells)
		if s == nil || lost[s.name] == nil {
			continue
		}
		tr := lost[s.name]
		for _, c := range cells {
			r := lostRange(tr, c.rowid)
			if r == nil {
				continue
			}
			inserted, err := w.insert(ctx, s, c)
			if err != nil {
				return err
			}
			if inserted {
				tr.Read++
				r.FromPages++
			}
		}
	}
	return w.commit()
}

// lostRange is the lost range of t that holds rowid, or nil.
func lostRange(t *TableReport, rowid int64) *Range {
	for i := range t.Lost {
		if t.Lost[i].From <= rowid && rowid <= t.Lost[i].To {
			return &t.Lost[i]
		}
	}
	return nil
}
