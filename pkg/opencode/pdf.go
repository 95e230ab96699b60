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

// FreshPDFs returns the PDFs the failed attempt's request sent that no
// request the provider accepted before it sent: those of the messages
// after the last assistant message that has no error (a step the provider
// answered, whose request held everything before it), and of that
// message's own tool results, which its request did not hold yet. A PDF a
// request the provider accepted already held is no cause of a later
// failure that names none. The request is the failed attempt's as the
// records are now.
func FreshPDFs(s *store.Session, failed *store.Message) []File {
	fi := slices.IndexFunc(s.Messages, func(m *store.Message) bool { return m.ID == failed.ID })
	if fi < 0 {
		return nil
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
	var out []File
	for _, f := range RequestFiles(s, sent.Build(s, sent.Options{AsOfError: true, Until: failed.ID})) {
		if f.Mime == "application/pdf" && fresh[f.MessageID] {
			out = append(out, f)
		}
	}
	return out
}

// IsPDF reports whether a mime type is a PDF's.
func IsPDF(mime string) bool { return strings.EqualFold(mime, "application/pdf") }

// PDFPages counts the pages of a PDF given as base64 (a data: URL's
// payload), from its page tree's /Count as the file's cross-reference
// table (or stream) leads to it. Only the parts of the file that lead there
// are decoded, so a large PDF costs a few reads, not a decode of it all.
// An error means sessfix cannot tell: the file is damaged, encrypted, or
// not a PDF.
func PDFPages(data string) (n int, err error) {
	ra, size, err := newBase64ReaderAt(data)
	if err != nil {
		return 0, err
	}
	defer func() {
		// The reader panics on some malformed files; sessfix then cannot
		// tell the page count, which is no reason to stop a scan.
		if x := recover(); x != nil {
			n, err = 0, fmt.Errorf("malformed PDF: %v", x)
		}
	}()
	r, err := pdf.NewReader(ra, size)
	if err != nil {
		return 0, err
	}
	n = r.NumPage()
	if n <= 0 {
		return 0, errors.New("malformed PDF: no page count")
	}
	return n, nil
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

// PDFFile is one PDF of a request with its page count.
type PDFFile struct {
	File
	Pages int
}

// RequestPDFPages lists the PDFs among a request's files (RequestFiles)
// whose pages sessfix can count, and their pages together.
func RequestPDFPages(files []File) (pdfs []PDFFile, total int) {
	for _, f := range files {
		if !IsPDF(f.Mime) {
			continue
		}
		n, err := PDFPages(f.Data)
		if err != nil {
			continue
		}
		pdfs = append(pdfs, PDFFile{File: f, Pages: n})
		total += n
	}
	return pdfs, total
}
