package watch_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/sessfix/sessfix/pkg/store"
)

// helperEnv makes the test binary a writer process; its value is the shape
// of the target store: "sessions" copies a session into a sessions/ store
// file by file, "sqlite" inserts it into a database row by row, each in its
// own transaction. Both rewrite one part every 100 ms for 3 s, as OpenCode
// does while a block streams, then give it its final body, print
// "last-write <unix ns> max-gap <ns>" and exit.
const helperEnv = "SESSFIX_WATCH_E2E_WRITER"

const (
	streamRewrites = 30
	streamEvery    = 100 * time.Millisecond
	recordEvery    = 50 * time.Millisecond
)

// runHelper runs the writer; args are: staging store, target store,
// session id, streamed part id.
func runHelper(mode string, args []string) int {
	var err error
	var c clock
	switch mode {
	case string(store.ShapeSessions):
		c, err = writeSessions(args[0], args[1], args[2], args[3])
	case string(store.ShapeSQLite):
		c, err = writeSQLite(args[0], args[1], args[2], args[3])
	default:
		err = fmt.Errorf("unknown writer mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 1
	}
	fmt.Printf("last-write %d max-gap %d\n", c.last.UnixNano(), c.maxGap)
	return 0
}

// clock records when the writer last wrote and the longest pause between
// two writes: a pause as long as the settle window means the session did
// settle while being written, which only a stalled (overloaded) writer
// causes.
type clock struct {
	last   time.Time
	maxGap time.Duration
}

func (c *clock) wrote() {
	now := time.Now()
	if !c.last.IsZero() && now.Sub(c.last) > c.maxGap {
		c.maxGap = now.Sub(c.last)
	}
	c.last = now
}

// writeSessions copies staging/<sid> into target/<sid>: session.json, then
// each message file followed by its parts, creating directories as
// OpenCode does.
func writeSessions(staging, target, sid, streamed string) (clock, error) {
	src := filepath.Join(staging, sid)
	var order []string
	if _, err := os.Stat(filepath.Join(src, "session.json")); err == nil {
		order = append(order, "session.json")
	}
	msgs, err := filepath.Glob(filepath.Join(src, "messages", "*.json"))
	if err != nil {
		return clock{}, err
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		order = append(order, filepath.Join("messages", filepath.Base(m)))
		mid := strings.TrimSuffix(filepath.Base(m), ".json")
		parts, _ := filepath.Glob(filepath.Join(src, "parts", mid, "*.json"))
		sort.Strings(parts)
		for _, p := range parts {
			order = append(order, filepath.Join("parts", mid, filepath.Base(p)))
		}
	}
	var c clock
	write := func(rel string, body []byte) error {
		dst := filepath.Join(target, sid, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		err := os.WriteFile(dst, body, 0o644)
		c.wrote()
		return err
	}
	var streamRel string
	for _, rel := range order {
		body, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			return clock{}, err
		}
		if err := write(rel, body); err != nil {
			return clock{}, err
		}
		if strings.Contains(rel, streamed) {
			streamRel = rel
			final := body
			for i := 0; i < streamRewrites; i++ {
				time.Sleep(streamEvery)
				grown := strings.Replace(string(final), `"text": "`, `"text": "`+strings.Repeat("…", i+1), 1)
				if err := write(rel, []byte(grown)); err != nil {
					return clock{}, err
				}
			}
			if err := write(rel, final); err != nil {
				return clock{}, err
			}
		}
		time.Sleep(recordEvery)
	}
	if streamRel == "" {
		return clock{}, fmt.Errorf("part %s not in session %s", streamed, sid)
	}
	// The time of the last write itself, not of the pause after it: the
	// settle window counts from when the store last changed.
	return c, nil
}

// writeSQLite inserts the session's rows from the staging database into the
// target one, in OpenCode's order, one transaction per row, with
// time_updated set to the current time.
func writeSQLite(staging, target, sid, streamed string) (clock, error) {
	db, err := sql.Open("sqlite", "file:"+target+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return clock{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`ATTACH DATABASE ? AS st`, staging); err != nil {
		return clock{}, err
	}
	now := func() int64 { return time.Now().UnixMilli() }
	var c clock
	tx := func(stmts ...func(*sql.Tx) error) error {
		t, err := db.Begin()
		if err != nil {
			return err
		}
		for _, s := range stmts {
			if err := s(t); err != nil {
				t.Rollback()
				return err
			}
		}
		err = t.Commit()
		c.wrote()
		return err
	}
	exec := func(q string, args ...any) func(*sql.Tx) error {
		return func(t *sql.Tx) error { _, err := t.Exec(q, args...); return err }
	}
	if err := tx(
		exec(`INSERT INTO main.session SELECT * FROM st.session WHERE id = ?`, sid),
		exec(`UPDATE main.session SET time_updated = ? WHERE id = ?`, now(), sid),
	); err != nil {
		return clock{}, fmt.Errorf("insert session: %w", err)
	}
	ids := func(q string, args ...any) ([]string, error) { return opencodetest.QueryIDs(db, q, args...) }
	msgs, err := ids(`SELECT id FROM st.message WHERE session_id = ? ORDER BY time_created, id`, sid)
	if err != nil {
		return clock{}, err
	}
	found := false
	for _, mid := range msgs {
		if err := tx(
			exec(`INSERT INTO main.message SELECT * FROM st.message WHERE id = ?`, mid),
			exec(`UPDATE main.message SET time_updated = ? WHERE id = ?`, now(), mid),
		); err != nil {
			return clock{}, fmt.Errorf("insert message %s: %w", mid, err)
		}
		time.Sleep(recordEvery)
		parts, err := ids(`SELECT id FROM st.part WHERE message_id = ? ORDER BY id`, mid)
		if err != nil {
			return clock{}, err
		}
		for _, pid := range parts {
			if err := tx(
				exec(`INSERT INTO main.part SELECT * FROM st.part WHERE id = ?`, pid),
				exec(`UPDATE main.part SET time_updated = ? WHERE id = ?`, now(), pid),
			); err != nil {
				return clock{}, fmt.Errorf("insert part %s: %w", pid, err)
			}
			if pid == streamed {
				found = true
				for i := 0; i < streamRewrites; i++ {
					time.Sleep(streamEvery)
					if err := tx(exec(`UPDATE main.part SET data = json_set(data, '$.text', ?), time_updated = ? WHERE id = ?`,
						strings.Repeat("…", i+1), now(), pid)); err != nil {
						return clock{}, fmt.Errorf("stream part %s: %w", pid, err)
					}
				}
				if err := tx(exec(`UPDATE main.part SET data = (SELECT data FROM st.part WHERE id = ?1), time_updated = ?2 WHERE id = ?1`, pid, now())); err != nil {
					return clock{}, err
				}
			}
			time.Sleep(recordEvery)
		}
	}
	if !found {
		return clock{}, fmt.Errorf("part %s not in session %s", streamed, sid)
	}
	return c, nil
}
