package scan

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var ruleSF181 = &Rule{
	Code:     SF181,
	Name:     "image-not-processed",
	Severity: Error,
	Summary:  "the provider refused an image the failed request was the first to send, although its header reads as an image",
	What: "The session's last attempt failed with an invalid-image error (Anthropic's `Could not process image` or `The image data you provided " +
		"does not represent a valid image`, OpenAI's `You uploaded an unsupported image`, Gemini's `Provided image is not valid`, xAI's `Invalid PNG image`, " +
		"which users saw for a PNG that decodes, …) and no SF173 " +
		"finding explains it: every image the request sends starts with the header of a PNG, JPEG, GIF or WebP. What the provider could not read is " +
		"then inside the image (pixel data cut short, as in a file read while it was still being written, or a variant the provider does not take), " +
		"which a scan does not decode. sessfix names the images that request was the first to send, as SF179 does for PDFs: those of the messages " +
		"after the last step the provider answered, and of that step's own tool results (a user's `file` part or a tool result's attachment). " +
		"An image an accepted request already held is not named. When the provider's text asks for a retry (Gemini's `Unable to process input image. " +
		"Please retry…`), the images are named only once a second attempt since the last accepted step failed the same way. " +
		"Nothing is predicted before a failed attempt: what the provider cannot read is not known.",
	Why:           "While the image stays in the history OpenCode sends it with every prompt, and the provider refuses each request the same way.",
	ProviderError: "Could not process image",
	FixDoc: "`replaceMedia` on each image named: a user's `file` part becomes a text saying what was removed (file name, type, size), " +
		"a tool result's attachment leaves the result and its output says so. The rest of the session stays, the images stay in the backup run, " +
		"and `sessfix undo` puts them back.",
	Fixable: true,
	Fix:     "replaceMedia",
	Check:   checkImageNotProcessed,
}

func checkImageNotProcessed(c *Context) {
	images, m := opencode.UnprocessedImages(c.Session)
	if len(images) == 0 {
		return
	}
	text := m.Get("error.data.message").String()
	if r := opencode.ReadError(c.Session, text, m); mediaReplaced(r, c.Session) != "" || repairedSince(r, c.Session) != "" {
		return // repaired since the attempt: SF302 says whether it holds
	}
	for _, v := range c.preflight() {
		if v.Code == SF173 {
			return // the preflight names the data that is no image
		}
	}
	parts := make([]*store.Part, len(images))
	names := make([]string, len(images))
	for i, f := range images {
		parts[i] = opencode.FindPart(c.Session, f.MessageID, f.PartID)
		names[i] = cmp.Or(fileName(parts[i], f), "an image ("+f.Mime+")")
	}
	first := "the request was the first to send " + names[0]
	if len(names) > 1 {
		first = fmt.Sprintf("the request was the first to send %d images (%s), this one among them", len(names), strings.Join(names, ", "))
	}
	reported := map[string]bool{}
	for i, f := range images {
		if reported[f.MessageID+"/"+f.PartID] {
			continue // one finding a part: its replaceMedia takes every image of it
		}
		reported[f.MessageID+"/"+f.PartID] = true
		g := At(c.Session.Message(f.MessageID), parts[i])
		g.ErrorType = string(opencode.ErrorInvalidImage)
		g.ProviderError = text
		g.Index = idx(f.N, f.M)
		g.Message = fmt.Sprintf("the last attempt failed with %q, and every image's header reads as an image; %s", text, first)
		c.Report(g)
	}
}
