package scan

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF180 = &Rule{
	Code:     SF180,
	Name:     "request-refused-for-size",
	Severity: Error,
	Summary:  "the provider refused the failed request for its size, and that request was the first to send these files",
	What: "The session's last attempt failed with a request size error (`request_too_large`: an HTTP 413 such as `Payload Too Large` or " +
		"`Request Entity Too Large`, which OpenAI's edge answers for a large image (anomalyco/opencode#12060), or Anthropic's " +
		"`Request exceeds the maximum size`; OpenCode 1.18.33 stores a 413 as a `ContextOverflowError` whose message is the status text) and sessfix's preflight finds no file over a request size limit it knows (SF175: Anthropic's 32 MB; " +
		"the limit of OpenAI's edge and of other providers is not published). sessfix names the files that request was the first to send, " +
		"as SF179 does for PDFs: those of the messages after the last step the provider answered, and of that step's own tool results " +
		"(a user's `file` part or a tool result's attachment, image or PDF). The request before it, without them, was accepted. " +
		"Once the session has been repaired after the attempt, SF302 alone says whether the error still applies. " +
		"A request refused with no new file (the text grew) is not traced to one: SF302 reports it and advises `sessfix rewind` or `sessfix fork`.",
	Why:           "While the files stay in the history OpenCode sends them with every prompt, and the provider refuses each request the same way.",
	ProviderError: "Payload Too Large",
	FixDoc: "`shrinkImage` first: each image named is re-encoded to at most a quarter of its base64 (scaled down as needed, within the provider's side limit), " +
		"with a mark inside the image (a JPEG comment or a PNG text chunk) saying sessfix shrank it and when; the files named that are no image, or do not " +
		"decode, are replaced (`replaceMedia`). Every new file is repaired, not only the largest: the limit is not known. The provider may refuse the shrunk " +
		"request too; then SF180 names the same files again, and since they carry the mark, `replaceMedia` replaces them: a user's `file` part becomes a text " +
		"saying what was removed (file name, type, size), a tool result's attachment leaves the result and its output says so, which brings the files the next " +
		"request sends back to those of the last request the provider accepted. When none of the files is an image that shrinks, `replaceMedia` comes at once " +
		"(`--strategy SF180=placeholder` asks for it). The files stay in the backup run and `sessfix undo` puts them back.",
	Fixable: true,
	Fix:     "shrinkImage",
	Check:   checkRefusedForSize,
}

func checkRefusedForSize(c *Context) {
	m := opencode.LastFailedWith(c.Session, opencode.ErrorRequestTooLarge)
	if m == nil {
		return
	}
	text := m.Get("error.data.message").String()
	if r := opencode.ReadError(c.Session, text, m); mediaReplaced(r, c.Session) != "" || repairedSince(r, c.Session) != "" {
		return // repaired since the attempt: SF302 says whether it holds
	}
	for _, v := range c.preflight() {
		if v.Code == SF175 {
			return // the preflight names what to replace
		}
	}
	files, req := opencode.FreshFiles(c.Session, m)
	if len(files) == 0 {
		return
	}
	total := 0
	names := make([]string, len(files))
	parts := make([]*store.Part, len(files))
	inParts := map[string]bool{}
	// A part with an image sessfix has not shrunk before is shrunk first;
	// one shrunk before, or with no image, is replaced.
	shrinkable, shrunk := map[string]bool{}, map[string]bool{}
	for i, f := range files {
		if opencode.Unshrunk(f) {
			shrinkable[f.MessageID+"/"+f.PartID] = true
		} else if strings.HasPrefix(f.Mime, "image/") {
			shrunk[f.MessageID+"/"+f.PartID] = true
		}
		parts[i] = opencode.FindPart(c.Session, f.MessageID, f.PartID)
		names[i] = cmp.Or(fileName(parts[i], f), "a file ("+f.Mime+")")
		total += f.Base64
		inParts[f.MessageID+"/"+f.PartID] = true
	}
	list := fmt.Sprintf("%s; %d bytes of base64", strings.Join(names, ", "), total)
	var first string
	switch {
	case len(files) == 1:
		first = fmt.Sprintf("the request was the first to send %s (%d bytes of base64)", names[0], total)
	case len(inParts) == 1:
		first = fmt.Sprintf("the request was the first to send this part's %d files (%s)", len(files), list)
	default:
		first = fmt.Sprintf("the request was the first to send %d files (%s) in %d parts, this one among them", len(files), list, len(inParts))
	}
	reported := map[string]bool{}
	for i, f := range files {
		if reported[f.MessageID+"/"+f.PartID] {
			continue // one finding a part: its replaceMedia takes every file of it
		}
		reported[f.MessageID+"/"+f.PartID] = true
		g := At(c.Session.Message(f.MessageID), parts[i])
		g.Fix = "replaceMedia"
		if shrinkable[f.MessageID+"/"+f.PartID] {
			g.Fix = "shrinkImage"
		}
		g.ErrorType = string(opencode.ErrorRequestTooLarge)
		g.ProviderError = text
		g.Index = req.Index(f.N, f.M)
		g.Message = fmt.Sprintf("the last attempt failed with %q, a request over the provider's size limit; %s", text, first)
		if shrunk[f.MessageID+"/"+f.PartID] {
			g.Message += "; sessfix shrank this part's image after an earlier refusal, so it is replaced now"
		}
		c.Report(g)
	}
}
