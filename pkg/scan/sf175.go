package scan

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
)

var ruleSF175 = preflightRule(&Rule{
	Code:     SF175,
	Name:     "request-over-size-limit",
	Severity: Error,
	Summary:  "the files the request sends add up to more than the provider's request size limit",
	What: "On an Anthropic provider, the base64 of the files the request sends (user `file` parts with a `data:` URL, such as an attached PDF, " +
		"and the attachments of tool results not compacted) adds up to more than 32 MB (33,554,432 bytes), the Messages API's request size limit " +
		"(Anthropic's PDF support and errors pages); the rest of the request is not counted, so a request just under it may still be refused. " +
		"The finding points at the largest PDF (else the largest file). The PDF page limit is SF177's.",
	Why:           "The API refuses the request (413, before it reaches Anthropic's servers) on every retry: the session is dead while the files stay in its history.",
	ProviderError: textRequestTooLarge,
	FixDoc: "`replaceMedia` on the PDFs, largest first, until the files the request sends fit the limit: each is replaced by a text saying what was removed " +
		"(a user's `file` part becomes a synthetic `text` part with the same id; a tool result's attachment leaves the result and its output says so); " +
		"the PDFs stay in the backup run and `sessfix undo` puts them back. When removing every PDF is not enough, nothing is changed and the finding stays.",
	Fixable: true,
	Fix:     "replaceMedia",
})

// textRequestTooLarge is the API's request_too_large error (Anthropic's
// errors page).
const textRequestTooLarge = "request_too_large: Request exceeds the maximum allowed number of bytes. The maximum request size is 32 MB for standard API endpoints."

// checkRequestSize checks the files of an Anthropic request against the
// request size limit.
func checkRequestSize(files []opencode.File) []Violation {
	total, pick := 0, -1
	for i, f := range files {
		total += f.Base64
		pdf := f.Mime == "application/pdf"
		if pick < 0 || pdf && (files[pick].Mime != "application/pdf" || f.Base64 > files[pick].Base64) ||
			!pdf && files[pick].Mime != "application/pdf" && f.Base64 > files[pick].Base64 {
			pick = i
		}
	}
	if total <= opencode.AnthropicRequestMax {
		return nil
	}
	f := files[pick]
	return []Violation{{
		Code: SF175, N: f.N, M: f.M, Index: idx(f.N, f.M), MessageID: f.MessageID, PartID: f.PartID, Severity: Error, Fix: "replaceMedia",
		ProviderError: textRequestTooLarge,
		Message: fmt.Sprintf("the files the request sends are %d bytes of base64, over the 32 MB request limit; the largest %s is %d bytes",
			total, kindOf(f.Mime), f.Base64),
	}}
}

func kindOf(mime string) string {
	if mime == "application/pdf" {
		return "PDF"
	}
	return "file (" + mime + ")"
}
