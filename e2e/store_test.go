//go:build acceptance

package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest"
	"github.com/tidwall/sjson"
)

// dataDir edits an OpenCode data dir directly, the way a crash, another
// tool or a user would, without going through sessfix's store package.
type dataDir struct {
	t   *testing.T
	dir string
}

func (d dataDir) dbPath() string { return filepath.Join(d.dir, "opencode.db") }

func (d dataDir) sqlite() bool {
	_, err := os.Stat(d.dbPath())
	return err == nil
}

func (d dataDir) partFile(msgID, partID string) string {
	return filepath.Join(d.dir, "storage", "part", msgID, partID+".json")
}

func (d dataDir) db() *sql.DB {
	d.t.Helper()
	db, err := opencodetest.OpenDB(d.dbPath())
	if err != nil {
		d.t.Fatalf("open %s: %v", d.dbPath(), err)
	}
	return db
}

func (d dataDir) exec(query string, args ...any) {
	d.t.Helper()
	db := d.db()
	defer db.Close()
	res, err := db.Exec(query, args...)
	if err != nil {
		d.t.Fatalf("%s: %v", query, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		d.t.Fatalf("%s %v: %d rows changed, want 1", query, args, n)
	}
}

// session loads a session (messages and parts in OpenCode's order).
func (d dataDir) session(id string) []opencodetest.Message {
	d.t.Helper()
	msgs, err := opencodetest.LoadSession(d.dir, id)
	if err != nil {
		d.t.Fatalf("load session %s: %v", id, err)
	}
	return msgs
}

// rawPart returns a part's stored JSON (SQLite: the data column).
func (d dataDir) rawPart(msgID, partID string) []byte {
	d.t.Helper()
	if d.sqlite() {
		db := d.db()
		defer db.Close()
		var data string
		if err := db.QueryRow(`SELECT data FROM part WHERE id = ?`, partID).Scan(&data); err != nil {
			d.t.Fatalf("part %s: %v", partID, err)
		}
		return []byte(data)
	}
	b, err := os.ReadFile(d.partFile(msgID, partID))
	if err != nil {
		d.t.Fatal(err)
	}
	return b
}

func (d dataDir) writePart(msgID, partID string, data []byte) {
	d.t.Helper()
	if d.sqlite() {
		d.exec(`UPDATE part SET data = ? WHERE id = ?`, string(data), partID)
		return
	}
	if err := os.WriteFile(d.partFile(msgID, partID), data, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// setPart sets JSON paths (sjson syntax) in a part's body, keeping every
// other byte.
func (d dataDir) setPart(msgID, partID string, kv ...any) {
	d.t.Helper()
	raw := d.rawPart(msgID, partID)
	for i := 0; i+1 < len(kv); i += 2 {
		var err error
		raw, err = sjson.SetBytes(raw, kv[i].(string), kv[i+1])
		if err != nil {
			d.t.Fatalf("set %v in part %s: %v", kv[i], partID, err)
		}
	}
	d.writePart(msgID, partID, raw)
}

// deletePaths removes JSON paths from a part's body.
func (d dataDir) deletePaths(msgID, partID string, paths ...string) {
	d.t.Helper()
	raw := d.rawPart(msgID, partID)
	for _, p := range paths {
		var err error
		raw, err = sjson.DeleteBytes(raw, p)
		if err != nil {
			d.t.Fatalf("delete %s in part %s: %v", p, partID, err)
		}
	}
	d.writePart(msgID, partID, raw)
}

// deletePart removes a part record.
func (d dataDir) deletePart(msgID, partID string) {
	d.t.Helper()
	if d.sqlite() {
		d.exec(`DELETE FROM part WHERE id = ?`, partID)
		return
	}
	if err := os.Remove(d.partFile(msgID, partID)); err != nil {
		d.t.Fatal(err)
	}
}

// rekeyPart gives a part another id (and so another place in its message).
func (d dataDir) rekeyPart(msgID, oldID, newID string) {
	d.t.Helper()
	if d.sqlite() {
		d.exec(`UPDATE part SET id = ? WHERE id = ?`, newID, oldID)
		return
	}
	raw := d.rawPart(msgID, oldID)
	raw, err := sjson.SetBytes(raw, "id", newID)
	if err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(d.partFile(msgID, newID), raw, 0o644); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Remove(d.partFile(msgID, oldID)); err != nil {
		d.t.Fatal(err)
	}
}

// overwritePartFile replaces a JSON-era part file's bytes (0-byte and
// NUL-filled files are what non-atomic writes leave after a crash).
func (d dataDir) overwritePartFile(msgID, partID string, b []byte) {
	d.t.Helper()
	if d.sqlite() {
		d.t.Fatal("part files exist only in the JSON storage/ shape")
	}
	if err := os.WriteFile(d.partFile(msgID, partID), b, 0o644); err != nil {
		d.t.Fatal(err)
	}
}

// idAfter returns a valid OpenCode id with the same prefix as id that sorts
// right after it: the 12 hex digits (ms*4096+counter) plus one, the same
// 14-character tail. It fails the test unless the result also sorts before
// next (when next is not empty).
func idAfter(t *testing.T, id, next string) string {
	t.Helper()
	if len(id) != 4+12+14 || id[3] != '_' {
		t.Fatalf("%q is not an OpenCode id", id)
	}
	n, err := strconv.ParseUint(id[4:16], 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", id, err)
	}
	out := fmt.Sprintf("%s_%012x%s", id[:3], n+1, id[16:])
	if out <= id || (next != "" && out >= next) {
		t.Fatalf("no id between %s and %s", id, next)
	}
	return out
}
