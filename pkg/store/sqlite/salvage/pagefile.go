package salvage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
)

// pageFile reads a database file page by page, without SQLite: the page
// scan's view of a file whose schema SQLite cannot read. The committed
// frames of its write-ahead log, when it has one, replace the pages they
// hold.
type pageFile struct {
	f, wal   *os.File
	walPages map[int]int64 // page number to the offset of its newest committed frame's data
	size     int           // page size
	usable   int           // page size less the reserved bytes at each page's end
	count    int           // pages in the database
	freelist map[int]bool
	// userVersion and appID are the header's, when the header is whole.
	userVersion, appID int32
	headerOK           bool
}

// openPages opens path (and path-wal) for the page scan. A header whose
// page size is not valid is read with the log's page size, or as 4096-byte
// pages (OpenCode's).
func openPages(path string) (*pageFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	p := &pageFile{f: f, size: 4096, freelist: map[int]bool{}}
	var h [100]byte
	_, herr := io.ReadFull(f, h[:])
	var walCount int
	if size := headerPageSize(h[:]); herr == nil && size > 0 {
		p.size = size
		_, walCount = p.openWAL(path)
	} else if size, _ := p.openWAL(path); size > 0 && size != p.size {
		// No header to say: the log's page size, when it has one.
		p.size = size
		_, walCount = p.openWAL(path)
	}
	p.usable = p.size
	p.count = max(int(fi.Size()/int64(p.size)), walCount)
	if b, err := p.page(1); err == nil && string(b[:16]) == magic {
		// A header whose page size is damaged still names the
		// reserved bytes and the freelist; its other values are kept
		// only when the page size is whole.
		copy(h[:], b)
		p.headerOK = headerPageSize(b) == p.size
		p.usable = p.size - int(h[20])
		p.userVersion = int32(binary.BigEndian.Uint32(h[60:64]))
		p.appID = int32(binary.BigEndian.Uint32(h[68:72]))
		p.readFreelist(int(binary.BigEndian.Uint32(h[32:36])))
	}
	if p.usable < 480 {
		p.usable = p.size
	}
	return p, nil
}

// headerPageSize is the page size of a database header, or 0 when b is
// no valid header.
func headerPageSize(b []byte) int {
	if len(b) < 100 || string(b[:16]) != magic {
		return 0
	}
	size := int(binary.BigEndian.Uint16(b[16:18]))
	if size == 1 {
		size = 65536
	}
	if size < 512 || size&(size-1) != 0 {
		return 0
	}
	return size
}

// openWAL indexes the committed frames of path-wal whose salts and
// checksums are valid; it returns the log's page size (0 without a
// usable log) and the database's size in pages after the last commit.
func (p *pageFile) openWAL(path string) (size, count int) {
	if p.wal == nil {
		w, err := os.Open(path + "-wal")
		if err != nil {
			return 0, 0
		}
		p.wal = w
	}
	var h [32]byte
	if _, err := p.wal.ReadAt(h[:], 0); err != nil {
		return 0, 0
	}
	magicWord := binary.BigEndian.Uint32(h[0:4])
	if magicWord&^1 != 0x377f0682 {
		return 0, 0
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if magicWord&1 == 1 {
		order = binary.BigEndian
	}
	size = int(binary.BigEndian.Uint32(h[8:12]))
	if size < 512 || size > 65536 || size&(size-1) != 0 {
		return 0, 0
	}
	if size != p.size {
		return size, 0
	}
	s0, s1 := walChecksum(order, h[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(h[24:28]) || s1 != binary.BigEndian.Uint32(h[28:32]) {
		return 0, 0
	}
	p.walPages = map[int]int64{}
	pending := map[int]int64{}
	frame := make([]byte, 24+size)
	for off := int64(32); ; off += int64(len(frame)) {
		if _, err := p.wal.ReadAt(frame, off); err != nil {
			break
		}
		if string(frame[8:16]) != string(h[16:24]) {
			break // a frame of an earlier log
		}
		s0, s1 = walChecksum(order, frame[:8], s0, s1)
		s0, s1 = walChecksum(order, frame[24:], s0, s1)
		if s0 != binary.BigEndian.Uint32(frame[16:20]) || s1 != binary.BigEndian.Uint32(frame[20:24]) {
			break
		}
		pending[int(binary.BigEndian.Uint32(frame[0:4]))] = off + 24
		if commit := int(binary.BigEndian.Uint32(frame[4:8])); commit > 0 {
			for n, at := range pending {
				p.walPages[n] = at
			}
			clear(pending)
			count = commit
		}
	}
	return size, count
}

// walChecksum continues the log's checksum (s0, s1) over b.
func walChecksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

const magic = "SQLite format 3\x00"

func (p *pageFile) Close() error {
	if p.wal != nil {
		p.wal.Close()
	}
	return p.f.Close()
}

// page reads page n (1-based): from the log when a committed frame holds
// it, else from the file.
func (p *pageFile) page(n int) ([]byte, error) {
	b := make([]byte, p.size)
	if at, ok := p.walPages[n]; ok {
		_, err := p.wal.ReadAt(b, at)
		return b, err
	}
	if n < 1 || n > p.count {
		return nil, fmt.Errorf("page %d is outside the database's %d pages", n, p.count)
	}
	_, err := p.f.ReadAt(b, int64(n-1)*int64(p.size))
	return b, err
}

// readFreelist marks the free pages (trunks and leaves), whose contents
// are deleted rows the page scan must not bring back. A damaged list is
// followed as far as it goes.
func (p *pageFile) readFreelist(trunk int) {
	for trunk != 0 && !p.freelist[trunk] {
		b, err := p.page(trunk)
		if err != nil {
			return
		}
		p.freelist[trunk] = true
		n := int(binary.BigEndian.Uint32(b[4:8]))
		for i := 0; i < n && 8+4*i+4 <= len(b); i++ {
			p.freelist[int(binary.BigEndian.Uint32(b[8+4*i:]))] = true
		}
		trunk = int(binary.BigEndian.Uint32(b[0:4]))
	}
}

// cell is one row of a table b-tree leaf page.
type cell struct {
	page   int
	rowid  int64
	values []any // nil, int64, float64, string, []byte
}

var errCell = errors.New("malformed cell")

// leafCells decodes the cells of page n when it is a table b-tree leaf
// (type 0x0D); ok is false for any other page. Cells that cannot be
// decoded (bad offsets, a broken overflow chain, a bad record) are
// counted in bad.
func (p *pageFile) leafCells(n int) (cells []cell, bad int, ok bool) {
	b, err := p.page(n)
	if err != nil {
		return nil, 0, false
	}
	hdr := 0
	if n == 1 {
		hdr = 100
	}
	if b[hdr] != 0x0d {
		return nil, 0, false
	}
	ncell := int(binary.BigEndian.Uint16(b[hdr+3 : hdr+5]))
	if hdr+8+2*ncell > p.usable {
		return nil, 0, false
	}
	for i := range ncell {
		off := int(binary.BigEndian.Uint16(b[hdr+8+2*i:]))
		c, err := p.decodeCell(b, off)
		if err != nil {
			bad++
			continue
		}
		c.page = n
		cells = append(cells, c)
	}
	return cells, bad, true
}

func (p *pageFile) decodeCell(b []byte, off int) (cell, error) {
	if off < 8 || off >= p.usable {
		return cell{}, errCell
	}
	size, n1 := varint(b[off:p.usable])
	if n1 == 0 || size > 1<<31 {
		return cell{}, errCell
	}
	rowid, n2 := varint(b[off+n1 : p.usable])
	if n2 == 0 {
		return cell{}, errCell
	}
	start := off + n1 + n2
	payload, err := p.payload(b, start, int(size))
	if err != nil {
		return cell{}, err
	}
	vals, err := record(payload)
	if err != nil {
		return cell{}, err
	}
	return cell{rowid: int64(rowid), values: vals}, nil
}

// payload is a cell's whole payload: the part on the page and the rest
// from its overflow chain (SQLite's file format, section 1.6).
func (p *pageFile) payload(b []byte, start, size int) ([]byte, error) {
	u := p.usable
	x := u - 35
	local := size
	if size > x {
		m := ((u-12)*32/255 - 23)
		k := m + (size-m)%(u-4)
		local = m
		if k <= x {
			local = k
		}
	}
	if start+local > u || (local < size && start+local+4 > u) {
		return nil, errCell
	}
	out := make([]byte, 0, size)
	out = append(out, b[start:start+local]...)
	if local == size {
		return out, nil
	}
	next := int(binary.BigEndian.Uint32(b[start+local:]))
	seen := map[int]bool{}
	for len(out) < size {
		if next == 0 || seen[next] || p.freelist[next] {
			return nil, errCell
		}
		seen[next] = true
		ob, err := p.page(next)
		if err != nil {
			return nil, errCell
		}
		take := min(size-len(out), u-4)
		out = append(out, ob[4:4+take]...)
		next = int(binary.BigEndian.Uint32(ob[0:4]))
	}
	return out, nil
}

// record decodes a record: its header of serial types, then the values.
func record(b []byte) ([]any, error) {
	hsize, n := varint(b)
	if n == 0 || hsize < uint64(n) || hsize > uint64(len(b)) {
		return nil, errCell
	}
	var types []uint64
	for i := n; i < int(hsize); {
		t, m := varint(b[i:hsize])
		if m == 0 {
			return nil, errCell
		}
		types = append(types, t)
		i += m
	}
	body := b[hsize:]
	vals := make([]any, len(types))
	for i, t := range types {
		var l int
		switch {
		case t == 0 || t == 8 || t == 9:
			l = 0
		case t <= 4:
			l = int(t)
		case t == 5:
			l = 6
		case t == 6 || t == 7:
			l = 8
		case t >= 12:
			l = int(t-12) / 2
		default:
			return nil, errCell // 10, 11: reserved
		}
		if l > len(body) {
			return nil, errCell
		}
		v := body[:l]
		body = body[l:]
		switch {
		case t == 0:
			vals[i] = nil
		case t == 8:
			vals[i] = int64(0)
		case t == 9:
			vals[i] = int64(1)
		case t <= 6:
			var x int64
			for _, c := range v {
				x = x<<8 | int64(c)
			}
			shift := 64 - 8*uint(l)
			vals[i] = x << shift >> shift // sign-extend
		case t == 7:
			vals[i] = math.Float64frombits(binary.BigEndian.Uint64(v))
		case t%2 == 0:
			vals[i] = append([]byte(nil), v...)
		default:
			vals[i] = string(v)
		}
	}
	if len(body) != 0 {
		return nil, errCell
	}
	return vals, nil
}

// varint decodes SQLite's big-endian varint (1 to 9 bytes); n is 0 when b
// ends first.
func varint(b []byte) (v uint64, n int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
