// Package testpdf writes small, valid PDF files for sessfix's tests: a
// given number of pages, an optional stream of random bytes (which nothing
// compresses) to make a file of a given size, and either of the two forms
// of cross-reference a reader must follow to the page tree (a classic xref
// table, or a PDF 1.5 cross-reference stream, as most tools write today).
package testpdf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
)

// Options shapes a file.
type Options struct {
	// Pages is the number of pages (at least 1).
	Pages int
	// Noise is the number of random bytes in the first page's content
	// stream, drawn from Seed.
	Noise int
	Seed  int64
	// XRefStream writes a cross-reference stream instead of a table.
	XRefStream bool
}

// Write returns the PDF.
func Write(o Options) []byte {
	if o.Pages < 1 {
		o.Pages = 1
	}
	var b bytes.Buffer
	var offs []int
	obj := func(body string) {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offs), body)
	}
	// Objects: 1 catalog, 2 page tree, 3 content, 4.. pages.
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	var kids bytes.Buffer
	for i := range o.Pages {
		fmt.Fprintf(&kids, "%d 0 R ", 4+i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), o.Pages))
	noise := make([]byte, o.Noise)
	rand.New(rand.NewSource(o.Seed)).Read(noise)
	offs = append(offs, b.Len())
	fmt.Fprintf(&b, "3 0 obj\n<< /Length %d >>\nstream\n", len(noise))
	b.Write(noise)
	b.WriteString("\nendstream\nendobj\n")
	for range o.Pages {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R >>")
	}
	xref := b.Len()
	size := len(offs) + 1
	if !o.XRefStream {
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", size)
		for _, off := range offs {
			fmt.Fprintf(&b, "%010d 00000 n \n", off)
		}
		fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", size, xref)
		return b.Bytes()
	}
	// The stream is one more object, which lists itself: fields of 1, 4
	// and 2 bytes (type, offset, generation), unfiltered.
	size++
	var rows bytes.Buffer
	row := func(typ byte, off uint32, gen uint16) {
		rows.WriteByte(typ)
		binary.Write(&rows, binary.BigEndian, off) //nolint:errcheck // a bytes.Buffer does not fail
		binary.Write(&rows, binary.BigEndian, gen) //nolint:errcheck
	}
	row(0, 0, 65535)
	for _, off := range offs {
		row(1, uint32(off), 0)
	}
	row(1, uint32(xref), 0)
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /Size %d /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", size-1, size, rows.Len())
	b.Write(rows.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref)
	return b.Bytes()
}
