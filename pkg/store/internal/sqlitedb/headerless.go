package sqlitedb

import (
	"io"
	"os"
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
// page unless two later pages are b-tree pages.
func Headerless(path string) bool {
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
	for n := int64(1); n < count && n <= 32; n++ {
		if _, err := f.ReadAt(b[:], n*size); err != nil {
			return false
		}
		switch b[0] {
		case 0x02, 0x05, 0x0a, 0x0d:
			btree++
		case 0x00:
		default:
			return false
		}
	}
	return btree >= 2 || btree >= 1 && page1Table
}
