package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
)

var ruleSF177 = preflightRule(&Rule{
	Code:     SF177,
	Name:     "pdf-over-page-limit",
	Severity: Error,
	Summary:  "the documents the request sends have more pages together than the provider allows",
	What: "On an Anthropic provider, the PDFs the request sends (user `file` parts with a `data:` URL, and the PDF attachments of tool results not compacted) " +
		"have more pages together than the Messages API takes: 100 for a model with a 200k-token context window, 600 for the others " +
		"(Anthropic's PDF support page; a warning between the two, as for SF172: sessfix does not know the model's window). The API answers " +
		"`A maximum of 100 PDF pages may be provided.` (as users quote it). sessfix counts each PDF's pages from its page tree, reading only the parts " +
		"of the file that lead there (as PDF readers do, bytes after the last `%%EOF` of the file's last 1024 bytes do not count); a PDF it cannot read (damaged, encrypted, or naming object numbers over the PDF limit of 8,388,607, " +
		"from which a reader would size its tables) is not counted: an info finding on it says so, with the reason. The finding points at the PDF with the most pages.",
	Why:           "The API refuses the request on every retry: the session is dead while the PDFs stay in its history.",
	ProviderError: opencode.PDFPagesText(opencode.AnthropicPDFPagesMax),
	FixDoc: "`replaceMedia` on the PDFs with the most pages first, until the pages the request sends are within the limit the finding (or the stored error) prints: " +
		"each is replaced by a text saying what was removed (a user's `file` part becomes a synthetic `text` part with the same id; a tool result's attachment " +
		"leaves the result and its output says so); the PDFs stay in the backup run and `sessfix undo` puts them back.",
	Fixable: true,
	Fix:     "replaceMedia",
})

var ruleSF178 = preflightRule(&Rule{
	Code:     SF178,
	Name:     "invalid-pdf-data",
	Severity: Error,
	Summary:  "a file the request sends typed application/pdf holds other data",
	What: "On an Anthropic provider, a file the request sends as a PDF (a user `file` part or a tool result's attachment typed `application/pdf`, " +
		"with a `data:` URL) holds data with no PDF header (`%PDF-`) in its first 1024 bytes: a text file or an image with a `.pdf` name. " +
		"The API answers `messages.N.content.M.pdf.source.base64.data: The PDF specified was not valid.` (as users quote it). " +
		"A PDF with a header that is damaged further in, an empty file, and data whose start is not base64 are not judged (the API's answers to them are not known). For a tool result's attachment the path the API prints is not known: the finding has no `provider_error`.",
	Why:           "The API refuses the request on every retry: the session is dead while the file stays in its history.",
	ProviderError: "messages.N.content.M.pdf.source.base64.data: " + opencode.TextInvalidPDF,
	FixDoc:        replaceMediaDoc,
	Fixable:       true,
	Fix:           "replaceMedia",
})

// checkPDFs checks the PDFs an Anthropic request sends: data that is no
// PDF (SF178), and the pages against the page limit (SF177): over 600 an
// error, over 100 a warning (the limit depends on the model's window,
// which the request does not tell).
func checkPDFs(files []opencode.File) []Violation {
	var out []Violation
	for _, f := range files {
		if !opencode.IsPDF(f.Mime) || !opencode.NotPDF(f.Data) {
			continue
		}
		v := Violation{Code: SF178, N: f.N, M: f.M, Index: idx(f.N, f.M), MessageID: f.MessageID, PartID: f.PartID, Severity: Error, Fix: "replaceMedia",
			Message: "a file the user attached as a PDF holds data with no PDF header"}
		if f.Attachment >= 0 {
			v.Message = "a file a tool returned as a PDF holds data with no PDF header"
		} else {
			v.ProviderError = idx(f.N, f.M) + ".pdf.source.base64.data: " + opencode.TextInvalidPDF
		}
		out = append(out, v)
	}
	all, total := opencode.CountPDFs(files)
	var pdfs []opencode.PDFFile
	for _, p := range all {
		switch {
		case p.Err == nil:
			pdfs = append(pdfs, p)
		case !opencode.NotPDF(p.Data): // data with no PDF header is SF178's
			out = append(out, uncountedPDF(p))
		}
	}
	if total <= opencode.AnthropicPDFPagesMax {
		return out
	}
	limit, sev, note := opencode.AnthropicPDFPagesMax, Warning, " of a model with a 200k-token context window (models with a larger window take 600)"
	if total > opencode.AnthropicLargePDFPagesMax {
		limit, sev, note = opencode.AnthropicLargePDFPagesMax, Error, ""
	}
	pick := pdfs[0]
	for _, p := range pdfs[1:] {
		if p.Pages > pick.Pages {
			pick = p
		}
	}
	return append(out, Violation{
		Code: SF177, N: pick.N, M: pick.M, Index: idx(pick.N, pick.M), MessageID: pick.MessageID, PartID: pick.PartID, Severity: sev, Fix: "replaceMedia",
		ProviderError: opencode.PDFPagesText(limit),
		Message: fmt.Sprintf("the request sends %d pages of PDF, over Anthropic's limit of %d%s; this PDF has %d",
			total, limit, note, pick.Pages),
	})
}

// uncountedPDF reports, as info, a PDF of the request whose pages sessfix
// cannot count (damaged further in, encrypted, or naming object numbers no
// PDF may have): the page limit is not checked for it, and saying so
// beats a silent pass.
func uncountedPDF(p opencode.PDFFile) Violation {
	return Violation{Code: SF177, N: p.N, M: p.M, Index: idx(p.N, p.M), MessageID: p.MessageID, PartID: p.PartID, Severity: Info,
		Message: fmt.Sprintf("sessfix cannot count this PDF's pages (%v), so the provider's page limit (100 or 600 pages a request) is not checked for it", p.Err)}
}
