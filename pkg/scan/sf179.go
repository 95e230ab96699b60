package scan

import (
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF179 = &Rule{
	Code:     SF179,
	Name:     "pdf-not-processed",
	Severity: Error,
	Summary:  "the provider could not process a pdf the failed request was the first to send",
	What: "The session's last attempt failed with Anthropic's `" + opencode.TextPDFUnprocessable + "`, which names neither the PDF nor the reason " +
		"(users have seen it for PDFs within every stated limit, sometimes only once and sometimes on every prompt after reading large PDFs). " +
		"sessfix names the PDFs that request was the first to send: those of the messages after the last step the provider answered, " +
		"and of that step's own tool results (a user's `file` part or a tool result's attachment typed `application/pdf`). " +
		"A PDF an accepted request already held is not named: the refusal of a request whose PDFs the provider had all taken before is not traced to one " +
		"(SF302 reports it without a repair; resuming again may be enough). Nothing is predicted before a failed attempt: what the API cannot read is not known.",
	Why:           "While the PDF stays in the history OpenCode sends it with every prompt, and the provider may refuse each of them the same way.",
	ProviderError: opencode.TextPDFUnprocessable,
	FixDoc: "`replaceMedia` on each PDF named: a user's `file` part becomes a text saying what was removed (file name, type, size), " +
		"a tool result's attachment leaves the result and its output says so. The rest of the session stays, the PDFs stay in the backup run, " +
		"and `sessfix undo` puts them back (for example to try them again once the provider reads them).",
	Fixable: true,
	Fix:     "replaceMedia",
	Check:   checkPDFNotProcessed,
}

func checkPDFNotProcessed(c *Context) {
	m := opencode.LastFailedWith(c.Session, opencode.ErrorPDFUnprocessable)
	if m == nil {
		return
	}
	text := m.Get("error.data.message").String()
	pdfs := opencode.FreshPDFs(c.Session, m)
	if len(pdfs) == 0 {
		return
	}
	parts := make([]*store.Part, len(pdfs))
	names := make([]string, len(pdfs))
	for i, p := range pdfs {
		parts[i] = opencode.FindPart(c.Session, p.MessageID, p.PartID)
		names[i] = pdfName(parts[i], p)
	}
	first := "the request was the first to send " + names[0]
	if len(names) > 1 {
		first = fmt.Sprintf("the request was the first to send %d PDFs (%s), this one among them", len(names), strings.Join(names, ", "))
	}
	for i, p := range pdfs {
		f := At(c.Session.Message(p.MessageID), parts[i])
		f.ErrorType = string(opencode.ErrorPDFUnprocessable)
		f.ProviderError = text
		f.Index = idx(p.N, p.M)
		f.Message = fmt.Sprintf("the last attempt failed with %q, which names no PDF; %s", text, first)
		c.Report(f)
	}
}

// pdfName is the file name of a request's PDF (fileName); "a PDF" when
// nothing says.
func pdfName(p *store.Part, f opencode.File) string {
	return cmp.Or(fileName(p, f), "a PDF")
}

// fileName is the file name of a request's file: its part's, or its
// attachment's, else the file the tool read (the read tool's filePath);
// "" when none says.
func fileName(p *store.Part, f opencode.File) string {
	if p == nil {
		return ""
	}
	key := "filename"
	if f.Attachment >= 0 {
		key = fmt.Sprintf("state.attachments.%d.filename", f.Attachment)
	}
	if n := p.Get(key).String(); n != "" {
		return n
	}
	if fp := p.Get("state.input.filePath").String(); f.Attachment >= 0 && fp != "" {
		return path.Base(filepath.ToSlash(fp))
	}
	return ""
}
