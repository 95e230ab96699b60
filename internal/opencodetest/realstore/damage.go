package realstore

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"os"
	"testing"

	_ "modernc.org/sqlite" // the driver of the root page query
)

// Torn is what DamagePage writes over a page: no valid b-tree page starts
// with it.
var Torn = bytes.Repeat([]byte("torn write "), 4096)

// DamagePage overwrites one leaf page of table's data in the recorded
// database with Torn, as a torn write or a bad sector would: the first
// leaf (in key order) that holds none of the strings in keep (record ids
// whose rows must stay readable). It returns the page number. The table's
// root must be an interior page (the table spans several pages).
func (s *Store) DamagePage(t testing.TB, table string, keep ...string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.Path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var root int
	err = db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&root)
	db.Close()
	if err != nil {
		t.Fatalf("root page of %s: %v", table, err)
	}
	// An empty log (a database in WAL mode that a read-only connection
	// opened leaves one) holds no page.
	if fi, err := os.Stat(s.Path + "-wal"); err == nil && fi.Size() > 0 {
		t.Fatalf("%s has a write-ahead log: the pages in the file are not the whole database", s.Path)
	}
	b, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	size := int(binary.BigEndian.Uint16(b[16:18]))
	if size == 1 {
		size = 65536
	}
	page := func(n int) []byte { return b[(n-1)*size : n*size] }
	interior := page(root)
	if interior[0] != 0x05 {
		t.Fatalf("the root page %d of %s is not an interior table page (type %#x)", root, table, interior[0])
	}
	cells := int(binary.BigEndian.Uint16(interior[3:5]))
	var leaves []int
	for i := range cells {
		off := int(binary.BigEndian.Uint16(interior[12+2*i:]))
		leaves = append(leaves, int(binary.BigEndian.Uint32(interior[off:])))
	}
	leaves = append(leaves, int(binary.BigEndian.Uint32(interior[8:12])))
	for _, n := range leaves {
		p := page(n)
		if p[0] != 0x0d {
			continue
		}
		kept := false
		for _, k := range keep {
			kept = kept || bytes.Contains(p, []byte(k))
		}
		if kept {
			continue
		}
		copy(p, Torn)
		if err := os.WriteFile(s.Path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Fatalf("every leaf page of %s holds one of %v", table, keep)
	return 0
}

// RootPage is the root page of the table or index name in the recorded
// database.
func (s *Store) RootPage(t testing.TB, name string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.Path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var root int
	if err := db.QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, name).Scan(&root); err != nil {
		t.Fatalf("root page of %s: %v", name, err)
	}
	return root
}

// OverwritePage writes Torn over page n of the database file, as a torn
// write or a bad sector would; on page 1 the 100-byte file header is kept,
// so only the schema's b-tree page is hit.
func (s *Store) OverwritePage(t testing.TB, n int) {
	t.Helper()
	b, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	size := int(binary.BigEndian.Uint16(b[16:18]))
	if size == 1 {
		size = 65536
	}
	start := (n - 1) * size
	if n == 1 {
		start = 100
	}
	copy(b[start:n*size], Torn)
	if err := os.WriteFile(s.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
