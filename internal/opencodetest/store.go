package opencodetest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Message is one stored message with its parts, as read straight from disk
// (independently of pkg/store, so tests can check it against real data).
type Message struct {
	ID    string
	Data  map[string]any // message body (SQLite: the data column)
	Parts []Part         // in id order, as OpenCode sends them
}

// Part is one stored part.
type Part struct {
	ID   string
	Data map[string]any
}

// Role is the message's role.
func (m Message) Role() string { s, _ := m.Data["role"].(string); return s }

// Type is the part's type.
func (p Part) Type() string { s, _ := p.Data["type"].(string); return s }

// Text is the part's text field.
func (p Part) Text() string { s, _ := p.Data["text"].(string); return s }

// Get walks a dotted path ("state.status", "metadata.anthropic.signature").
func Get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = mm[k]
	}
	return cur
}

// LoadSession reads a session's messages and parts from a data dir: from
// its database (DBFile) when it exists, else from the storage/ tree.
func LoadSession(dataDir, sessionID string) ([]Message, error) {
	db := DBFile(dataDir)
	if _, err := os.Stat(db); err == nil {
		return loadSQLite(db, sessionID)
	}
	return loadStorage(filepath.Join(dataDir, "storage"), sessionID)
}

// OpenDB opens an OpenCode SQLite database with the pure-Go driver.
func OpenDB(path string) (*sql.DB, error) {
	return sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
}

func loadSQLite(path, sessionID string) ([]Message, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id`, sessionID)
	if err != nil {
		return nil, err
	}
	var msgs []Message
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			rows.Close()
			return nil, err
		}
		m := Message{ID: id}
		if err := json.Unmarshal([]byte(data), &m.Data); err != nil {
			rows.Close()
			return nil, fmt.Errorf("message %s: %w", id, err)
		}
		msgs = append(msgs, m)
	}
	rows.Close()
	for i := range msgs {
		prow, err := db.Query(`SELECT id, data FROM part WHERE message_id = ? ORDER BY id`, msgs[i].ID)
		if err != nil {
			return nil, err
		}
		for prow.Next() {
			var id, data string
			if err := prow.Scan(&id, &data); err != nil {
				prow.Close()
				return nil, err
			}
			p := Part{ID: id}
			if err := json.Unmarshal([]byte(data), &p.Data); err != nil {
				prow.Close()
				return nil, fmt.Errorf("part %s: %w", id, err)
			}
			msgs[i].Parts = append(msgs[i].Parts, p)
		}
		prow.Close()
	}
	return msgs, nil
}

func readJSONDir(dir string) ([]string, []map[string]any, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	var ids []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	sort.Strings(ids)
	out := make([]map[string]any, len(ids))
	for i, id := range ids {
		b, err := os.ReadFile(filepath.Join(dir, id+".json"))
		if err != nil {
			return nil, nil, err
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, id+".json"), err)
		}
	}
	return ids, out, nil
}

func loadStorage(root, sessionID string) ([]Message, error) {
	ids, bodies, err := readJSONDir(filepath.Join(root, "message", sessionID))
	if err != nil {
		return nil, err
	}
	msgs := make([]Message, len(ids))
	for i := range ids {
		msgs[i] = Message{ID: ids[i], Data: bodies[i]}
		pids, pbodies, err := readJSONDir(filepath.Join(root, "part", ids[i]))
		if err != nil {
			return nil, err
		}
		for j := range pids {
			msgs[i].Parts = append(msgs[i].Parts, Part{ID: pids[j], Data: pbodies[j]})
		}
	}
	return msgs, nil
}

// QueryIDs runs a query whose rows are one string each (ids).
func QueryIDs(db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Sessions lists the session ids in a data dir (SQLite or storage/ tree).
func Sessions(dataDir string) ([]string, error) {
	dbPath := DBFile(dataDir)
	if _, err := os.Stat(dbPath); err == nil {
		db, err := OpenDB(dbPath)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		return QueryIDs(db, `SELECT id FROM session ORDER BY id`)
	}
	matches, err := filepath.Glob(filepath.Join(dataDir, "storage", "session", "*", "ses_*.json"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		out = append(out, strings.TrimSuffix(filepath.Base(m), ".json"))
	}
	sort.Strings(out)
	return out, nil
}

// Checkpoint folds an SQLite database's WAL into the main file
// (PRAGMA wal_checkpoint(TRUNCATE)) and switches it to rollback-journal
// mode, so the .db file alone holds everything and -wal/-shm can go.
func Checkpoint(path string) error {
	db, err := OpenDB(path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if _, err := db.Exec(`PRAGMA journal_mode=DELETE`); err != nil {
		return fmt.Errorf("journal mode %s: %w", path, err)
	}
	return nil
}

// Tables lists the table names of an SQLite database.
func Tables(path string) ([]string, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
