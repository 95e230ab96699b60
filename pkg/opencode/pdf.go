package opencode

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The Messages API's limit on the pages of the PDFs one request sends
// (Anthropic's PDF support page: 100 pages for a model with a 200k-token
// context window, 600 for the others; Claude's on Bedrock the same, its
// user guide). A request over it gets "A maximum of 100 PDF pages may be
// provided." (users' reports of the live API: anthropics/claude-code#5707,
// badlogic/lemmy#40).
const (
	AnthropicPDFPagesMax      = 100
	AnthropicLargePDFPagesMax = 600
)

// PDFPagesText is the API's error for a request over limit PDF pages.
func PDFPagesText(limit int) string {
	return fmt.Sprintf("A maximum of %d PDF pages may be provided.", limit)
}

var pdfPagesRe = regexp.MustCompile(`(?i)a maximum of (\d+) pdf pages may be provided`)

// PDFPageLimit reads the limit a stored or predicted page-limit error
// prints.
func PDFPageLimit(text string) (int, bool) {
	m := pdfPagesRe.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil && n > 0
}

// pdfHeaderWindow is how far into a file its "%PDF-" header may be: PDF
// readers (and the PDF standard's implementation notes) accept up to 1024
// bytes of anything before it.
const pdfHeaderWindow = 1024

// NotPDF reports base64 data that decodes to a file with no PDF header
// in its first 1024 bytes: a file the API refuses as no PDF. Only that
// much is decoded. Data whose start is not base64 is not judged (false):
// what the API answers to it is not known.
func NotPDF(data string) bool {
	if data == "" {
		return false // an empty file: the API's answer is not known
	}
	n := min(len(data), (pdfHeaderWindow+2)/3*4)
	n -= n % 4
	head := make([]byte, n/4*3)
	k, err := base64.StdEncoding.Decode(head, []byte(data[:n]))
	if err != nil {
		return false
	}
	return !bytes.Contains(head[:k], []byte("%PDF-"))
}

// TextInvalidPDF is the Messages API's error for a document block whose
// data is not a PDF, after the block's path ("messages.2.content.0.pdf.
// source.base64.data: "), as users quote the live API
// (anthropics/claude-code#5174, #19577, #20195: a text file with a .pdf
// name).
const TextInvalidPDF = "The PDF specified was not valid."

// TextPDFUnprocessable is the Messages API's answer to a request holding a
// PDF it cannot read, for reasons it does not name: 400
// invalid_request_error "Could not process PDF", with no index
// (anthropics/anthropic-sdk-python#903, where a PDF within every stated
// limit got it, sometimes only once; anthropics/claude-code#13985, #14038,
// where it came back on every prompt after two large PDFs were read).
const TextPDFUnprocessable = "Could not process PDF"

// FreshPDFs returns the PDFs among FreshFiles.
func FreshPDFs(s *store.Session, failed *store.Message) []File {
	return freshWhere(s, failed, func(mime string) bool { return mime == "application/pdf" })
}

// FreshImages returns the images among FreshFiles.
func FreshImages(s *store.Session, failed *store.Message) []File {
	return freshWhere(s, failed, func(mime string) bool { return strings.HasPrefix(mime, "image/") })
}

// freshWhere returns the files among FreshFiles whose mime type is kept.
func freshWhere(s *store.Session, failed *store.Message, keep func(mime string) bool) []File {
	files, _ := FreshFiles(s, failed)
	var out []File
	for _, f := range files {
		if keep(f.Mime) {
			out = append(out, f)
		}
	}
	return out
}

// UnprocessedImages returns the images a provider could not process
// although their headers read as images, as the stored attempt tells
// (SF181 names them, fix replaces them): when the session's last attempt
// failed with an invalid-image error, the images its request was the
// first to send; none while the provider's text asks for a retry that has
// not been made (AsksForRetry: a second attempt since the last accepted
// step must have failed the same way). failed is that attempt, nil when
// the last attempt did not fail so.
func UnprocessedImages(s *store.Session) (images []File, failed *store.Message) {
	m := LastFailedWith(s, ErrorInvalidImage)
	if m == nil {
		return nil, nil
	}
	if AsksForRetry(m.Get("error.data.message").String()) && FailedSinceAccepted(s, m) < 2 {
		return nil, m
	}
	return FreshImages(s, m), m
}

// FailedSinceAccepted counts the failed attempts of the same error type as
// failed since the last step the provider answered, failed included: 2
// when a resume after the first failure was refused the same way.
func FailedSinceAccepted(s *store.Session, failed *store.Message) int {
	fi := slices.IndexFunc(s.Messages, func(m *store.Message) bool { return m.ID == failed.ID })
	if fi < 0 {
		return 0
	}
	t, n := StoredErrorType(failed), 0
	for i := fi; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" {
			continue
		}
		if !m.Get("error").Exists() {
			break
		}
		if StoredErrorType(m) == t {
			n++
		}
	}
	return n
}

// FreshFiles returns the files (images, PDFs) the failed attempt's request
// sent that no request the provider accepted before it sent: those of the
// messages after the last assistant message that has no error (a step the
// provider answered, whose request held everything before it), and of that
// message's own tool results, which its request did not hold yet. A file a
// request the provider accepted already held is no cause of a later
// failure that names none. The request (returned too, for its indexes) is
// the failed attempt's as the records are now; nil files and request when
// failed is not in the session.
func FreshFiles(s *store.Session, failed *store.Message) ([]File, *sent.Request) {
	fi := slices.IndexFunc(s.Messages, func(m *store.Message) bool { return m.ID == failed.ID })
	if fi < 0 {
		return nil, nil
	}
	from := 0
	for i := fi - 1; i >= 0; i-- {
		if m := s.Messages[i]; m.Role == "assistant" && !m.Get("error").Exists() {
			from = i
			break
		}
	}
	fresh := map[string]bool{}
	for _, m := range s.Messages[from:fi] {
		fresh[m.ID] = true
	}
	req := sent.Build(s, sent.Options{AsOfError: true, Until: failed.ID})
	var out []File
	for _, f := range RequestFiles(s, req) {
		if fresh[f.MessageID] {
			out = append(out, f)
		}
	}
	return out, req
}

// IsPDF reports whether a mime type is a PDF's.
func IsPDF(mime string) bool { return strings.EqualFold(mime, "application/pdf") }

// PDFPages counts the pages of a PDF given as base64 (a data: URL's
// payload), from its page tree's /Count as the file's cross-reference
// table (or stream) leads to it. The reader decodes only the parts of the
// file that lead there, after xrefNumbersFit has refused object numbers no
// PDF can have in the cross-reference sections it will read. An error
// means sessfix cannot tell: the file is damaged, encrypted, or not a PDF.
func PDFPages(data string) (n int, err error) {
	ra, size, err := newBase64ReaderAt(data)
	if err != nil {
		return 0, err
	}
	end := pdfEnd(ra, size)
	if err := xrefNumbersFit(data, end); err != nil {
		return 0, err
	}
	defer func() {
		// The reader panics on some malformed files; sessfix then cannot
		// tell the page count, which is no reason to stop a scan.
		if x := recover(); x != nil {
			n, err = 0, fmt.Errorf("malformed PDF: %v", x)
		}
	}()
	r, err := pdf.NewReader(pdf20{ra}, end)
	if err != nil {
		return 0, err
	}
	n = r.NumPage()
	if n <= 0 {
		return 0, errors.New("malformed PDF: no page count")
	}
	return n, nil
}

// pdfTail is how far from a file's end its %%EOF may be: PDF readers
// look for it in the last 1024 bytes (PDF Reference 1.7, implementation
// note 18), so a file with bytes appended after it (a signature, a marker,
// a line of padding some tools add) still opens.
const pdfTail = 1024

// pdfEnd is where the PDF of size bytes ends for its reader: just after
// the last %%EOF in its last pdfTail bytes, or size when there is none
// (the reader then says what is wrong). sessfix's PDF reader wants %%EOF
// within the file's last 100 bytes.
func pdfEnd(ra io.ReaderAt, size int64) int64 {
	n := min(size, pdfTail)
	tail := make([]byte, n)
	k, _ := ra.ReadAt(tail, size-n)
	i := bytes.LastIndex(tail[:k], []byte("%%EOF"))
	if i < 0 {
		return size
	}
	return size - n + int64(i+len("%%EOF"))
}

// pdf20 shows a PDF 2.0 file's header to the PDF reader as 1.7's: the
// reader refuses any version but 1.0–1.7, though 2.0 keeps the page tree
// and both forms of cross-reference as 1.7 has them (ISO 32000-2).
type pdf20 struct{ io.ReaderAt }

func (p pdf20) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.ReaderAt.ReadAt(b, off)
	if off == 0 && n >= 8 && bytes.HasPrefix(b, []byte("%PDF-2.")) && b[7] == '0' {
		b[5], b[7] = '1', '7'
	}
	return n, err
}

// pdfObjectsMax is the PDF specification's limit on a file's indirect
// objects (ISO 32000-1, annex C.2: 8,388,607), so on its object numbers.
const pdfObjectsMax = 8_388_607

// errXrefNumbers is PDFPages' error for a file whose cross-reference
// sections name object numbers no PDF can have.
var errXrefNumbers = fmt.Errorf("malformed PDF: its cross-reference names object numbers over the PDF limit (%d)", pdfObjectsMax)

// xrefNumbersFit refuses a file whose cross-reference sections name object
// numbers over the PDF limit: a /Size, an /Index range, or an xref table's
// subsection. The PDF reader sizes its table of objects from those numbers
// before it reads a single entry, so a damaged or crafted file of a few
// hundred bytes (a /Size of 2000000000) would make it allocate tens of GB
// and end the process (a Go out-of-memory is fatal, no panic to recover).
// It reads what the reader will: the sections startxref leads to, then
// each /Prev (at most pdfSectionsMax, each once), a window at a time.
func xrefNumbersFit(data string, end int64) error {
	ra, _, err := newBase64ReaderAt(data)
	if err != nil {
		return err
	}
	size := end
	window := func(off, n int64) []byte {
		n = max(0, min(n, size-off))
		b := make([]byte, n)
		k, _ := ra.ReadAt(b, off)
		return b[:k]
	}
	tail := window(max(0, size-1024), 1024)
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return nil // the reader says what is wrong
	}
	off, ok := pdfInt(skipPDFSpace(tail[i+len("startxref"):]))
	seen := map[int64]bool{}
	for k := 0; ok && k < pdfSectionsMax && off < size && !seen[off]; k++ {
		seen[off] = true
		w := window(off, pdfWindow)
		sec := skipPDFSpace(w)
		dict := sec // an xref stream's dictionary starts its object
		if bytes.HasPrefix(sec, []byte("xref")) {
			at := off + int64(len(w)-len(sec)+len("xref"))
			var fits bool
			if dict, fits = xrefTableFits(window, at); !fits {
				return errXrefNumbers
			}
		}
		if !dictNumbersFit(dict) {
			return errXrefNumbers
		}
		off, ok = -1, false
		if j := bytes.Index(dict, []byte("/Prev")); j >= 0 {
			off, ok = pdfInt(skipPDFSpace(dict[j+len("/Prev"):]))
		}
	}
	return nil
}

// pdfWindow is how much of a file xrefNumbersFit reads at a time: a
// cross-reference stream's dictionary or a trailer fits in it.
const pdfWindow = 4096

// pdfSectionsMax bounds the cross-reference sections xrefNumbersFit
// follows (a file has one per incremental update).
const pdfSectionsMax = 1024

// xrefTableFits reads a classic table from at (just after "xref") to its
// "trailer": every subsection's "start count" line must fit the limit. It
// returns the trailer's window.
func xrefTableFits(window func(off, n int64) []byte, at int64) (trailer []byte, fits bool) {
	var carry []byte
	for {
		chunk := window(at, 64<<10)
		if len(chunk) == 0 {
			return nil, true // no trailer: the reader says what is wrong
		}
		at += int64(len(chunk))
		buf := append(carry, chunk...)
		end := bytes.Index(buf, []byte("trailer"))
		lines := buf
		if end >= 0 {
			lines = buf[:end]
		} else if j := bytes.LastIndexAny(buf, "\r\n"); j >= 0 {
			lines, carry = buf[:j], append([]byte(nil), buf[j:]...)
		} else if len(buf) > 64<<10 {
			return nil, true // no line in 64 KB: no table; the reader says what is wrong
		} else {
			lines, carry = nil, buf
		}
		for _, line := range bytes.FieldsFunc(lines, func(r rune) bool { return r == '\n' || r == '\r' }) {
			f := bytes.Fields(line)
			if len(f) != 2 {
				continue
			}
			start, ok1 := pdfInt(f[0])
			count, ok2 := pdfInt(f[1])
			if ok1 && ok2 && start+count > pdfObjectsMax+1 {
				return nil, false
			}
		}
		if end >= 0 {
			t := buf[end+len("trailer"):]
			if len(t) < pdfWindow {
				t = append(t, window(at, pdfWindow-int64(len(t)))...)
			}
			return t, true
		}
	}
}

// dictNumbersFit checks a cross-reference dictionary's /Size and /Index.
func dictNumbersFit(dict []byte) bool {
	if j := bytes.Index(dict, []byte("/Size")); j >= 0 {
		if n, ok := pdfInt(skipPDFSpace(dict[j+len("/Size"):])); ok && n > pdfObjectsMax+1 {
			return false
		}
	}
	j := bytes.Index(dict, []byte("/Index"))
	if j < 0 {
		return true
	}
	arr := skipPDFSpace(dict[j+len("/Index"):])
	if len(arr) == 0 || arr[0] != '[' {
		return true
	}
	arr = arr[1:]
	if end := bytes.IndexByte(arr, ']'); end >= 0 {
		arr = arr[:end]
	}
	f := bytes.Fields(arr)
	for k := 0; k+1 < len(f); k += 2 {
		start, ok1 := pdfInt(f[k])
		count, ok2 := pdfInt(f[k+1])
		if ok1 && ok2 && start+count > pdfObjectsMax+1 {
			return false
		}
	}
	return true
}

// pdfInt reads the unsigned integer b starts with; a number of more than
// ten digits reads as over every limit.
func pdfInt(b []byte) (int64, bool) {
	var n int64
	k := 0
	for ; k < len(b) && b[k] >= '0' && b[k] <= '9'; k++ {
		if k == 10 {
			return 1 << 40, true
		}
		n = n*10 + int64(b[k]-'0')
	}
	return n, k > 0
}

func skipPDFSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t' || b[0] == '\f' || b[0] == 0) {
		b = b[1:]
	}
	return b
}

// base64ReaderAt reads the bytes a standard, padded base64 string decodes
// to at any offset, decoding only the 4-character groups it needs. It
// reads at most budget bytes in all: the PDF reader follows a file's
// chain of cross-reference sections without noticing a loop (a damaged
// file whose /Prev points back at itself), and the budget ends it.
type base64ReaderAt struct {
	data   string
	size   int64
	budget int64
}

// errReadBudget ends a read of a PDF that reads far more than its size.
var errReadBudget = errors.New("malformed PDF: read several times its size (a loop in its cross-reference chain)")

func newBase64ReaderAt(data string) (*base64ReaderAt, int64, error) {
	if len(data)%4 != 0 {
		return nil, 0, errors.New("not padded base64")
	}
	size := int64(DecodedLen(data))
	return &base64ReaderAt{data: data, size: size, budget: 4*size + 1<<20}, size, nil
}

func (b *base64ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if b.budget -= int64(len(p)); b.budget < 0 {
		return 0, errReadBudget
	}
	if off >= b.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), b.size)
	first, last := off/3, (end+2)/3 // groups [first, last)
	buf := make([]byte, (last-first)*3)
	n, err := base64.StdEncoding.Decode(buf, []byte(b.data[first*4:last*4]))
	if err != nil {
		return 0, err
	}
	buf = buf[:n]
	k := copy(p, buf[off-first*3:min(int64(n), end-first*3)])
	if int64(k) < int64(len(p)) {
		return k, io.EOF
	}
	return k, nil
}

// PDFFile is one PDF of a request with its page count, or why sessfix
// cannot count it (Err).
type PDFFile struct {
	File
	Pages int
	Err   error
}

// RequestPDFPages lists the PDFs among a request's files (RequestFiles)
// whose pages sessfix can count, and their pages together.
func RequestPDFPages(files []File) (pdfs []PDFFile, total int) {
	all, total := CountPDFs(files)
	for _, p := range all {
		if p.Err == nil {
			pdfs = append(pdfs, p)
		}
	}
	return pdfs, total
}

// CountPDFs lists every file of files typed as a PDF with its pages, or
// the reader's error for one sessfix cannot count, and the pages of those
// it counted together. Each PDF is read once.
func CountPDFs(files []File) (pdfs []PDFFile, total int) {
	for _, f := range files {
		if !IsPDF(f.Mime) {
			continue
		}
		n, err := PDFPages(f.Data)
		pdfs = append(pdfs, PDFFile{File: f, Pages: n, Err: err})
		if err == nil {
			total += n
		}
	}
	return pdfs, total
}
