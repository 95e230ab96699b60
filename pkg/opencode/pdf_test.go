package opencode

import (
	"bytes"
	"encoding/base64"
	"io"
	"math/rand"
	"regexp"
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
