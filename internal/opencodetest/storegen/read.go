package storegen

import (
	"database/sql"
	"os"
	"path/filepath"
	"sync"
)

// The read-only baselines: what it costs to merely read a store's bytes,
// without parsing or checking anything. Benchmarks and scripts/bench.sh
// compare `sessfix scan` with them.

// ReadTree reads every file under root with the given number of
// goroutines, which share a stack of directories still to list (os.ReadDir,
// then os.ReadFile for each file), and returns the bytes read.
func ReadTree(root string, workers int) (int64, error) {
	workers = max(workers, 1)
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		dirs    = []string{root}
		pending = 1 // directories pushed and not yet finished
		total   int64
		first   error
		wg      sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int64
			for {
				mu.Lock()
				for len(dirs) == 0 && pending > 0 {
					cond.Wait()
				}
				if pending == 0 {
					total += n
					mu.Unlock()
					return
				}
				dir := dirs[len(dirs)-1]
				dirs = dirs[:len(dirs)-1]
				mu.Unlock()

				des, err := os.ReadDir(dir)
				var sub []string
				for _, de := range des {
					p := filepath.Join(dir, de.Name())
					if de.IsDir() {
						sub = append(sub, p)
						continue
					}
					data, rerr := os.ReadFile(p)
					if rerr != nil && err == nil {
						err = rerr
					}
					n += int64(len(data))
				}

				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				dirs = append(dirs, sub...)
				pending += len(sub) - 1
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return total, first
}

// ReadSQLite selects every data column of the message and part tables (and
// every session row) of an OpenCode database through a read-only
// connection, the part table split by rowid between the goroutines, and
// returns the bytes of the data columns.
func ReadSQLite(path string, workers int) (int64, error) {
	workers = max(workers, 1)
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)
	var maxRow int64
	if err := db.QueryRow(`SELECT COALESCE(MAX(rowid), 0) FROM part`).Scan(&maxRow); err != nil {
		return 0, err
	}
	type query struct {
		sql  string
		args []any
	}
	queries := []query{{`SELECT * FROM session`, nil}, {`SELECT data FROM message`, nil}}
	step := maxRow/int64(workers) + 1
	for lo := int64(0); lo <= maxRow; lo += step {
		queries = append(queries, query{`SELECT data FROM part WHERE rowid >= ? AND rowid < ?`, []any{lo, lo + step}})
	}
	var (
		mu    sync.Mutex
		total int64
		first error
		wg    sync.WaitGroup
		next  = make(chan query, len(queries))
	)
	for _, q := range queries {
		next <- q
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := range next {
				n, err := readRows(db, q.sql, q.args...)
				mu.Lock()
				total += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return total, first
}

// readRows runs a query and returns the bytes of its column when it has
// one (the data columns); wider rows (sessions) are read but not counted.
func readRows(db *sql.DB, q string, args ...any) (int64, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return 0, err
		}
		if len(cols) == 1 {
			n += int64(len(vals[0]))
		}
	}
	return n, rows.Err()
}
