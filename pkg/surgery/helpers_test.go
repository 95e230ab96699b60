package surgery

import (
	"context"
	"database/sql"
	"testing"

	"github.com/sessfix/sessfix/pkg/store"
)

// withRevertColumn sets the session row's revert column (JSON text, as
// OpenCode writes it) and reloads the session.
func withRevertColumn(t *testing.T, st store.Store, revert string) *store.Session {
	t.Helper()
	db, err := sql.Open("sqlite", st.Info().Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE session SET revert = ? WHERE id = ?`, revert, sesID); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(context.Background(), store.SessionRef{ID: sesID})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
