package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/ocrelease"
	"github.com/sessfix/sessfix/internal/opencodetest/realstore"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// TestHeaderGoneIsADamagedDatabase: a real 1.18.33 database whose 100-byte
// header is overwritten no longer starts with "SQLite format 3", but it is
// still a database: it opens as a damaged store whose health says what is
// wrong (SF501, which fix salvages), not as "not an sqlite database". A
// file of the same size that is not laid out in pages (text, zeros) is
// still refused, and so are the same pages in a file not named *.db.
func TestHeaderGoneIsADamagedDatabase(t *testing.T) {
	rs := realstore.Copy(t, ocrelease.V1_18)
	b, err := os.ReadFile(rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[:100], bytes.Repeat([]byte{0xa5}, 100))
	if err := os.WriteFile(rs.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := shapes.Open([]string{rs.Path})
	if err != nil {
		t.Fatalf("open a database whose header is gone: %v", err)
	}
	defer d.Close()
	if len(d.Stores) != 1 || d.Stores[0].Info().Shape != store.ShapeSQLite {
		t.Fatalf("opened %d stores, want the database", len(d.Stores))
	}
	st := d.Stores[0]
	var dmg *store.DamagedError
	if _, err := st.List(context.Background()); !errors.As(err, &dmg) {
		t.Fatalf("List = %v, want the damage", err)
	}
	hc, ok := st.(store.HealthChecker)
	if !ok {
		t.Fatal("the damaged store has no health")
	}
	h, err := hc.Health(context.Background(), store.HealthOptions{})
	if err != nil || h == nil || !strings.Contains(h.Unopenable, "header is gone") {
		t.Fatalf("health = %+v, %v; want the header named", h, err)
	}

	for name, c := range map[string]struct {
		file string
		body []byte
	}{
		"text":  {"opencode.db", bytes.Repeat([]byte("not a database, but a text file "), len(b)/32)},
		"zeros": {"opencode.db", make([]byte, len(b))},
		// The same pages under a name OpenCode never gives a database.
		"pages named .json": {"session.json", b},
	} {
		body := c.body
		p := filepath.Join(t.TempDir(), c.file)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := shapes.Open([]string{p}); err == nil {
			d.Close()
			t.Errorf("%s: a file of %s opened as a store", name, name)
		}
	}
}
