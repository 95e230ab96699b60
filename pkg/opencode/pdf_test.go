package opencode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
)

func TestPDFPages(t *testing.T) {
	for _, c := range []testpdf.Options{
		{Pages: 1},
		{Pages: 101},
		{Pages: 7, Noise: 100_000, Seed: 3},
		{Pages: 1, XRefStream: true},
		{Pages: 601, XRefStream: true},
		{Pages: 12, Noise: 70_001, Seed: 9, XRefStream: true},
	} {
		data := base64.StdEncoding.EncodeToString(testpdf.Write(c))
		n, err := PDFPages(data)
		if err != nil || n != c.Pages {
			t.Errorf("%+v: PDFPages = %d, %v; want %d", c, n, err, c.Pages)
		}
	}
}

// TestPDFPagesAsReadersOpen: files PDF readers open though sessfix's PDF
// reader alone would not: bytes after %%EOF (within the last 1024, where
// readers look for it) and a PDF 2.0 header. Each is counted; %%EOF
// further from the end than that is not.
func TestPDFPagesAsReadersOpen(t *testing.T) {
	table := testpdf.Write(testpdf.Options{Pages: 9})
	stream := testpdf.Write(testpdf.Options{Pages: 4, XRefStream: true})
	v20 := func(b []byte) []byte {
		if !bytes.HasPrefix(b, []byte("%PDF-1.7\n")) {
			t.Fatalf("testpdf's header changed: %q", b[:9])
		}
		return append([]byte("%PDF-2.0\n"), b[9:]...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for name, c := range map[string]struct {
		file  []byte
		pages int
	}{
		"a marker after %%EOF":          {cat(table, []byte("sessfix-test-marker\n")), 9},
		"a stream, padding after %%EOF": {cat(stream, bytes.Repeat([]byte{0}, 900)), 4},
		"two updates' %%EOF, then text": {cat(table, []byte("% a comment\n%%EOF\njunk")), 9},
		"PDF 2.0":                       {v20(table), 9},
		"PDF 2.0, a stream, a marker":   {cat(v20(stream), []byte("marker")), 4},
	} {
		n, err := PDFPages(base64.StdEncoding.EncodeToString(c.file))
		if err != nil || n != c.pages {
			t.Errorf("%s: PDFPages = %d, %v; want %d", name, n, err, c.pages)
		}
	}
	far := cat(table, bytes.Repeat([]byte("x"), pdfTail))
	if n, err := PDFPages(base64.StdEncoding.EncodeToString(far)); err == nil {
		t.Errorf("%%%%EOF %d bytes before the end: PDFPages = %d, want an error", pdfTail, n)
	}
	v21 := append([]byte("%PDF-2.1\n"), table[9:]...)
	if n, err := PDFPages(base64.StdEncoding.EncodeToString(v21)); err == nil {
		t.Errorf("PDF 2.1 (no such version): PDFPages = %d, want an error", n)
	}
}

func TestPDFPagesCannotTell(t *testing.T) {
	whole := testpdf.Write(testpdf.Options{Pages: 150})
	// A damaged file whose cross-reference section names itself as the
	// one before it (/Prev): the reader would follow it for ever.
	xref := regexp.MustCompile(`startxref\n(\d+)`).FindSubmatch(whole)[1]
	loop := bytes.Replace(whole, []byte("/Root 1 0 R >>\nstartxref"), []byte("/Root 1 0 R /Prev "+string(xref)+" >>\nstartxref"), 1)
	if bytes.Equal(loop, whole) {
		t.Fatal("the /Prev loop was not written")
	}
	for name, data := range map[string]string{
		"a /Prev loop":   base64.StdEncoding.EncodeToString(loop),
		"not a PDF":      base64.StdEncoding.EncodeToString([]byte("hello, this is a text file called notes.pdf\n")),
		"truncated":      base64.StdEncoding.EncodeToString(whole[:len(whole)/2]),
		"not base64":     "%%%%",
		"unpadded":       base64.RawStdEncoding.EncodeToString([]byte("%PDF-1.7 x")),
		"empty":          "",
		"trailer no pdf": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("startxref\n9\n%%EOF\n"), 3)),
	} {
		if n, err := PDFPages(data); err == nil {
			t.Errorf("%s: PDFPages = %d, want an error", name, n)
		}
	}
}

// TestPDFPagesObjectNumbers: a file whose cross-reference names object
// numbers no PDF can have is refused before the PDF reader sizes its
// tables from them (a /Size of 2000000000 made it allocate 64 GB and end
// the process), in both forms of cross-reference.
func TestPDFPagesObjectNumbers(t *testing.T) {
	stream := testpdf.Write(testpdf.Options{Pages: 3, XRefStream: true})
	table := testpdf.Write(testpdf.Options{Pages: 3})
	edit := func(b []byte, old, new string) string {
		t.Helper()
		e := bytes.Replace(b, []byte(old), []byte(new), 1)
		if bytes.Equal(e, b) {
			t.Fatalf("%q is not in the file", old)
		}
		return base64.StdEncoding.EncodeToString(e)
	}
	for name, data := range map[string]string{
		"stream /Size":  edit(stream, "/Type /XRef /Size 8 ", "/Type /XRef /Size 2000000000 "),
		"stream /Index": edit(stream, "/Type /XRef /Size 8 ", "/Type /XRef /Size 8 /Index [0 1 2000000000 7] "),
		"table section": edit(table, "xref\n0 7\n", "xref\n2000000000 7\n"),
		"trailer /Size": edit(table, "trailer\n<< /Size 7 ", "trailer\n<< /Size 99999999999 "),
	} {
		if n, err := PDFPages(data); !errors.Is(err, errXrefNumbers) {
			t.Errorf("%s: PDFPages = %d, %v; want %v", name, n, err, errXrefNumbers)
		}
	}
}

// TestXrefNumbersFit: the limit is the PDF specification's (8,388,607
// objects, so a /Size of 8,388,608), in the sections startxref and /Prev
// lead to; what is not a cross-reference number is not judged.
func TestXrefNumbersFit(t *testing.T) {
	for dict, fits := range map[string]bool{
		"<< /Size 8388608 >>":                                        true,
		"<< /Size 8388609 >>":                                        false,
		"<< /Size\n\t 8388609 >>":                                    false,
		"<< /Index [8388600 8] >>":                                   true,
		"<< /Index [0 1 8388600 9]":                                  false,
		"<< /Index[ 8388600  9 ] >>":                                 false,
		"<< /Size 5 /Prev 99999999999 >>":                            true,
		"<< /ColorSpace [/Indexed /DeviceRGB 255 9999999999 0 R] >>": true,
		"<< /FunctionType 0 /Size [2000000000] >>":                   true,
	} {
		if got := dictNumbersFit([]byte(dict)); got != fits {
			t.Errorf("%q: fits %v, want %v", dict, got, fits)
		}
	}
	file := func(sections ...string) string {
		var b bytes.Buffer
		b.WriteString("%PDF-1.7\n3 0 obj\n99999999 2\nendobj\n") // two numbers outside a table
		last := 0
		for _, s := range sections { // PREV is the section before
			prev := last
			last = b.Len()
			b.WriteString(strings.ReplaceAll(s, "PREV", strconv.Itoa(prev)) + "\n")
		}
		fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", last)
		return base64.StdEncoding.EncodeToString(b.Bytes())
	}
	table := "xref\n0 2\n0000000000 65535 f \n0000000009 00000 n \ntrailer\n<< /Size 2 >>"
	for name, c := range map[string]struct {
		data string
		fits bool
	}{
		"a table":                  {file(table), true},
		"a table at the limit":     {file("xref\r\n8388607 1\r\n0000000009 00000 n\r\ntrailer\r\n<< /Size 8388608 >>"), true},
		"a subsection over it":     {file("xref\r\n8388607 2\r\ntrailer\r\n<< /Size 2 >>"), false},
		"a trailer over it":        {file("xref\n0 1\ntrailer << /Size 99999999999 >>"), false},
		"a stream over it":         {file("7 0 obj\n<< /Type /XRef /Size 2000000000 /W [1 4 2] >>\nstream\nendstream\nendobj"), false},
		"an older section over it": {file("xref\n2000000000 1\ntrailer\n<< /Size 2 >>", "xref\n0 1\ntrailer\n<< /Size 2 /Prev PREV >>"), false},
		"a /Prev loop":             {file("xref\n0 1\ntrailer\n<< /Size 2 /Prev 0 >>"), true},
		"no startxref":             {base64.StdEncoding.EncodeToString([]byte("xref\n2000000000 1\n")), true},
	} {
		if err := xrefNumbersFit(c.data, int64(DecodedLen(c.data))); (err == nil) != c.fits {
			t.Errorf("%s: %v, want fits %v", name, err, c.fits)
		}
	}
}

// TestBase64ReaderAt reads every kind of range (group-aligned or not, at
// the end, past it) and compares with the whole decode.
func TestBase64ReaderAt(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int{0, 1, 2, 3, 4, 5, 1000, 1001, 1002} {
		raw := make([]byte, size)
		rng.Read(raw)
		ra, n, err := newBase64ReaderAt(base64.StdEncoding.EncodeToString(raw))
		if err != nil || n != int64(size) {
			t.Fatalf("size %d: %d, %v", size, n, err)
		}
		for off := 0; off <= size+1; off++ {
			for _, l := range []int{1, 2, 3, 4, 7, size + 2} {
				p := make([]byte, l)
				k, err := ra.ReadAt(p, int64(off))
				want := raw[min(off, size):min(off+l, size)]
				if !bytes.Equal(p[:k], want) {
					t.Fatalf("size %d off %d len %d: read %x, want %x", size, off, l, p[:k], want)
				}
				if (k < l) != (err == io.EOF) {
					t.Fatalf("size %d off %d len %d: %d bytes, err %v", size, off, l, k, err)
				}
			}
		}
	}
}

func TestPDFPageLimit(t *testing.T) {
	for text, want := range map[string]int{
		PDFPagesText(100): 100,
		"Bad Request: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"A maximum of 600 PDF pages may be provided.\"}}": 600,
		"too many images and documents: 104 + 1 > 100": 0,
	} {
		n, ok := PDFPageLimit(text)
		if n != want || ok != (want > 0) {
			t.Errorf("PDFPageLimit(%q) = %d, %v; want %d", text, n, ok, want)
		}
	}
}

func TestNotPDF(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	text := b64([]byte("some text that is long enough to wrap a line"))
	for name, c := range map[string]struct {
		data string
		want bool // NotPDF
	}{
		"a PDF":                     {b64(testpdf.Write(testpdf.Options{Pages: 2})), false},
		"a header after 1000 bytes": {b64(append(bytes.Repeat([]byte("x"), 1000), "%PDF-1.4\n"...)), false},
		"a header after 1100 bytes": {b64(append(bytes.Repeat([]byte("x"), 1100), "%PDF-1.4\n"...)), true},
		"a text file":               {b64([]byte("meeting notes\n")), true},
		"a PNG":                     {b64([]byte("\x89PNG\r\n\x1a\n0000")), true},
		"short PDF":                 {b64([]byte("%PDF-")), false},
		// Not judged: the API's answer to data that is not base64 is not
		// known.
		"not base64":              {"%PDF-1.7", false},
		"base64 with line breaks": {text[:20] + "\n" + text[20:], false},
		"empty":                   {"", false},
	} {
		if got := NotPDF(c.data); got != c.want {
			t.Errorf("%s: NotPDF = %v, want %v", name, got, c.want)
		}
	}
}

// BenchmarkPDFPages counts the pages of a 30 MB PDF (random bytes in a
// content stream, a cross-reference stream): what a scan pays per PDF a
// request sends.
func BenchmarkPDFPages(b *testing.B) {
	data := base64.StdEncoding.EncodeToString(testpdf.Write(testpdf.Options{Pages: 40, Noise: 30 << 20, Seed: 1, XRefStream: true}))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if n, err := PDFPages(data); err != nil || n != 40 {
			b.Fatal(n, err)
		}
	}
}
