package fix

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// TestFixMovesAnOversizedPartOut: a copy of the recorded 1.18.33 database
// in which a user's part holds a 56 MB base64 PDF (over SF503's default
// 50 MiB; the edit is the test's, a real run attaching such a PDF takes
// minutes of the mock's time). `fix --yes` with default flags moves the
// PDF into the backup run (payloads/, decoded, byte for byte the PDF),
// leaves a text naming that file in the part, and the scan finds no
// oversized row; `sessfix undo` puts every row back exactly.
func TestFixMovesAnOversizedPartOut(t *testing.T) {
	state := t.TempDir()
	t.Setenv("SESSFIX_STATE_DIR", state)
	rs := realstore.Copy(t, ocrelease.V1_18)
	pdf := bytes.Repeat([]byte("%PDF-1.7 0 obj stream endobj\n"), (42<<20)/29)
	url := "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(pdf)
	body, _ := json.Marshal(map[string]any{"type": "file", "mime": "application/pdf", "filename": "manual.pdf", "url": url})
	db, err := sql.Open("sqlite", "file:"+rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	var partID string
	err = db.QueryRow(`SELECT p.id FROM part p JOIN message m ON m.id = p.message_id WHERE json_extract(m.data, '$.role') = 'user' AND json_extract(p.data, '$.type') = 'text' ORDER BY p.id LIMIT 1`).Scan(&partID)
	if err == nil {
		_, err = db.Exec(`UPDATE part SET data = ? WHERE id = ?`, string(body), partID)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := storetest.State(t, rs.Path, store.ShapeSQLite)

	e := newEnv(rs.Path)
	e.opts.Yes, e.opts.Activity, e.opts.Apply = true, idle, nil
	if err := e.run(t); err != nil {
		t.Fatalf("fix --yes: %v\n%s\n%s", err, e.out, e.errOut)
	}
	if !strings.Contains(e.out.String()+e.errOut.String(), "moveOutPayload") {
		t.Errorf("fix does not say it moved the payload out:\n%s\n%s", e.out, e.errOut)
	}
	runs, err := backup.List(backup.Options{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	kept, err := os.ReadFile(filepath.Join(state, "backups", runs[0].ID, "payloads", partID+"-manual.pdf"))
	if err != nil || !bytes.Equal(kept, pdf) {
		t.Fatalf("the backup run does not keep the PDF: %v, %d bytes", err, len(kept))
	}
	var text string
	db, _ = sql.Open("sqlite", "file:"+rs.Path+"?mode=ro")
	err = db.QueryRow(`SELECT json_extract(data, '$.text') FROM part WHERE id = ?`, partID).Scan(&text)
	db.Close()
	if err != nil || !strings.HasPrefix(text, "[sessfix moved the file manual.pdf (application/pdf, about 44.0 MB) out of this session") ||
		!strings.Contains(text, "payloads/"+partID+"-manual.pdf") {
		t.Fatalf("the part's text: %v %q", err, text)
	}
	if _, err := backup.Undo(context.Background(), backup.Options{}, runs[0].ID, false); err != nil {
		t.Fatalf("undo: %v", err)
	}
	if storetest.State(t, rs.Path, store.ShapeSQLite) != before {
		t.Fatal("undo did not put the rows back exactly")
	}
}
