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

// withTotalsColumns gives the session table the cost and tokens_* columns
// OpenCode 1.18.33 has, sets them as OpenCode would have (the fixture
// record's totals), and reloads the session.
func withTotalsColumns(t *testing.T, st store.Store, cost float64, in, out int64) *store.Session {
	t.Helper()
	db, err := sql.Open("sqlite", st.Info().Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []string{"`cost` real DEFAULT 0 NOT NULL", "`tokens_input` integer DEFAULT 0 NOT NULL", "`tokens_output` integer DEFAULT 0 NOT NULL",
		"`tokens_reasoning` integer DEFAULT 0 NOT NULL", "`tokens_cache_read` integer DEFAULT 0 NOT NULL", "`tokens_cache_write` integer DEFAULT 0 NOT NULL"} {
		if _, err := db.Exec("ALTER TABLE session ADD COLUMN " + c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`UPDATE session SET cost = ?, tokens_input = ?, tokens_output = ? WHERE id = ?`, cost, in, out, sesID); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(context.Background(), store.SessionRef{ID: sesID})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
