package sqlitedb

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
)

// Headerless reports whether the file at path is laid out as an SQLite
// database whose 100-byte header is gone (overwritten by a bad first
// sector or another program's write): it does not start with SQLite's
// magic, but its size is a whole number of pages of a valid page size
// and its pages start the way b-tree, overflow and freelist pages do.
// Such a file is a damaged database, not some other file: SQL cannot open
// it, and the salvage's page scan can read its rows.
//
// The check reads at most the first 33 pages. A page of SQLite starts
// with its b-tree type (2, 5, 10 or 13) or, for an overflow or freelist
// page, with a 4-byte page number whose first byte is 0 in any database
// under 16 million pages. At least one page must be a b-tree page, and
// page 1's b-tree (sqlite_master's root, after the header) must be a table
// page unless two later pages are b-tree pages. Every b-tree page's header
// must fit its page: a cell count whose pointer array ends before the cell
// content area, which starts within the page. Only files named *.db, as
// OpenCode names its databases, are considered.
func Headerless(path string) bool {
	if filepath.Ext(path) != ".db" {
		// OpenCode's databases are opencode.db and opencode-<channel>.db:
		// an export file or any other file is never taken for one.
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() < 1024 {
		return false
	}
	var head [len(magic)]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:]) == magic {
		return false
	}
	for _, size := range []int64{4096, 1024, 2048, 8192, 16384, 32768, 65536, 512} {
		if fi.Size()%size != 0 || fi.Size()/size < 2 {
			continue
		}
		if pagesLookValid(f, size, fi.Size()/size) {
			return true
		}
	}
	return false
}

// pagesLookValid checks the first bytes of pages 1 to 33 of size bytes.
func pagesLookValid(f *os.File, size, count int64) bool {
	var b [1]byte
	if _, err := f.ReadAt(b[:], 100); err != nil {
		return false
	}
	page1Table := b[0] == 0x0d || b[0] == 0x05
	btree := 0
	var h [12]byte
	for n := int64(1); n < count && n <= 32; n++ {
		if _, err := f.ReadAt(h[:], n*size); err != nil {
			return false
		}
		switch h[0] {
		case 0x02, 0x05, 0x0a, 0x0d:
			if !btreeHeaderFits(h[:], size) {
				return false
			}
			btree++
		case 0x00:
		default:
			return false
		}
	}
	return btree >= 2 || btree >= 1 && page1Table
}

// btreeHeaderFits checks a b-tree page header (h: its first 12 bytes)
// against the page size: the cell content area starts within the page
// (0 stands for 65536), after the header and the cell pointer array.
func btreeHeaderFits(h []byte, size int64) bool {
	hdr := int64(8)
	if h[0] == 0x02 || h[0] == 0x05 {
		hdr = 12
	}
	cells := int64(binary.BigEndian.Uint16(h[3:5]))
	content := int64(binary.BigEndian.Uint16(h[5:7]))
	if content == 0 {
		content = 65536
	}
	return content <= size && hdr+2*cells <= content
}
