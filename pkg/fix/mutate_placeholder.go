package fix

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

var stPlaceholder = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the media the provider cannot take (image data that is no image, PDF data that is no PDF, an image over a limit that does not shrink) by a text saying what was removed " +
		"(file name, type, size): a user's file part becomes a text part in its place, a tool result's attachment leaves the result and its output says so; " +
		"the rest of the message stays, and the media stay in the backup"}

// replaceMedia replaces the media of a part that the provider rejects and
// that no other repair keeps: an image whose data is not an image of a
// type the provider takes, or one over the size or side limit of the
// session's next request (the shrink comes first; this is what is left
// when the image does not decode). A user's file part becomes a synthetic
// text part with the same id, so it keeps its place in the message, whose
// text names the file, its type and size, and why it was removed; its
// time is the repair's, which tells the attempt that failed on it from
// the history after the repair. A tool part loses those attachments, and
// its output ends with the same text for each. Other parts, and media the
// provider takes, get no edit.
func replaceMedia(s *store.Session, m *store.Message, p *store.Part, e env) ([]store.Edit, error) {
	maxBase64, side := opencode.ImageLimits(s)
	return replaceParts(s, m, p, e, func(_ int, url, mime string) string { return rejected(url, mime, maxBase64, side) })
}

// replaceParts replaces the media of p that pick names a reason for
// (pick gets -1 for a file part's own media, else the attachment's index,
// and returns "" for media to keep).
func replaceParts(s *store.Session, m *store.Message, p *store.Part, e env, pick func(i int, url, mime string) string) ([]store.Edit, error) {
	switch typ := p.Get("type").String(); {
	case typ == "file" && m.Role == "user":
		why := pick(-1, p.Get("url").String(), p.Get("mime").String())
		if why == "" {
			return nil, errNotApplicable
		}
		text := opencode.MediaPlaceholder(p.Get("filename").String(), p.Get("mime").String(), p.Get("url").String(), why)
		f := obj().set("type", "text").set("text", text).set("synthetic", true).
			set("time", obj().set("start", e.ms()).set("end", e.ms()))
		ed := partEdit(store.OpUpdate, m, p, "replaceMedia", "file part replaced by a text saying what was removed: "+why)
		ed.After = sessionLayout(s).format(newPart(s, m, p.ID, f), "")
		return []store.Edit{ed}, nil
	case typ == "tool":
		return replaceToolMedia(m, p, pick)
	}
	return nil, errNotApplicable
}

// replaceToolMedia takes the attachments pick names out of a tool part's
// state.attachments and appends a placeholder line for each to its output.
func replaceToolMedia(m *store.Message, p *store.Part, pick func(i int, url, mime string) string) ([]store.Edit, error) {
	atts := p.Get("state.attachments")
	if !atts.IsArray() {
		return nil, errNotApplicable
	}
	var keep []json.RawMessage
	var notes, whys []string
	for i, a := range atts.Array() {
		url, mime := a.Get("url").String(), a.Get("mime").String()
		why := pick(i, url, mime)
		if why == "" {
			keep = append(keep, json.RawMessage(a.Raw))
			continue
		}
		notes = append(notes, opencode.MediaPlaceholder(a.Get("filename").String(), mime, url, why))
		whys = append(whys, why)
	}
	if len(notes) == 0 {
		return nil, errNotApplicable
	}
	if keep == nil {
		keep = []json.RawMessage{}
	}
	after, err := setJSON(p.Raw, keep, "state", "attachments")
	if err != nil {
		return nil, fmt.Errorf("part %s: %w", p.ID, err)
	}
	output := p.Get("state.output").String()
	if output != "" {
		output += "\n\n"
	}
	if after, err = setJSON(after, output+strings.Join(notes, "\n"), "state", "output"); err != nil {
		return nil, fmt.Errorf("part %s: %w", p.ID, err)
	}
	what := "tool result's attachment replaced by a text saying what was removed: " + whys[0]
	if len(notes) > 1 {
		what = fmt.Sprintf("%d attachments of the tool result replaced by a text saying what was removed", len(notes))
	}
	ed := partEdit(store.OpUpdate, m, p, "replaceMedia", what)
	ed.After = after
	return []store.Edit{ed}, nil
}

// rejected says why the provider rejects media (a data: URL typed mime)
// that replaceMedia replaces, "" when it takes them or a shrink keeps
// them: an image over a limit is shrinkImage's as long as it decodes and
// shrinks (which this tries, so it costs a decode: only when repairing).
func rejected(url, mime string, maxBase64, side int) string {
	why, overLimit := opencode.MediaRejected(url, mime, maxBase64, side)
	if why != "" && overLimit {
		if data, ok := opencode.Base64Data(url); ok {
			if _, _, _, err := shrinkData(data, maxBase64, side); err == nil {
				return ""
			}
		}
		why += ", and it does not decode to be shrunk"
	}
	return why
}

var stPlaceholderPDF = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the PDFs the request sends, largest first, by a text saying what was removed, until the files fit the provider's request size limit; " +
		"nothing when removing every PDF is not enough"}

// whyRequestTooLarge is the reason a PDF replaced for the request size
// gets in its placeholder.
const whyRequestTooLarge = "the files the request sent were over the provider's 32 MB request limit"

// replaceRequestPDFs is SF175's repair: the PDFs the session's next
// request sends (user file parts, tool results' attachments), largest
// first, are replaced by placeholders (replaceParts) until the base64 of
// the files the request sends is within the request size limit. When
// replacing every PDF is not enough, it does not apply.
func replaceRequestPDFs(s *store.Session, e env) ([]store.Edit, error) {
	files := opencode.RequestFiles(s, sent.Build(s, sent.Options{NextPrompt: true}))
	total := 0
	var pdfs []opencode.File
	for _, f := range files {
		total += f.Base64
		if f.Mime == "application/pdf" {
			pdfs = append(pdfs, f)
		}
	}
	if total <= opencode.AnthropicRequestMax {
		return nil, nil
	}
	sort.SliceStable(pdfs, func(a, b int) bool { return pdfs[a].Base64 > pdfs[b].Base64 })
	var picked []opencode.File
	for _, f := range pdfs {
		if total <= opencode.AnthropicRequestMax {
			break
		}
		picked = append(picked, f)
		total -= f.Base64
	}
	if total > opencode.AnthropicRequestMax {
		return nil, errNotApplicable
	}
	return replaceFiles(s, picked, whyRequestTooLarge, e)
}

var stPlaceholderPages = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the PDFs the request sends, most pages first, by a text saying what was removed, until their pages are within the provider's page limit"}

// replacePDFPages is SF177's repair: the PDFs the session's next request
// sends (user file parts, tool results' attachments), most pages first,
// are replaced by placeholders (replaceParts) until their pages together
// are within the limit the finding's provider error prints.
func replacePDFPages(s *store.Session, providerError string, e env) ([]store.Edit, error) {
	limit, ok := opencode.PDFPageLimit(providerError)
	if !ok {
		return nil, errNotApplicable
	}
	pdfs, total := opencode.RequestPDFPages(opencode.RequestFiles(s, sent.Build(s, sent.Options{NextPrompt: true})))
	if total <= limit {
		return nil, nil
	}
	sort.SliceStable(pdfs, func(a, b int) bool { return pdfs[a].Pages > pdfs[b].Pages })
	var picked []opencode.File
	for _, f := range pdfs {
		if total <= limit {
			break
		}
		picked = append(picked, f.File)
		total -= f.Pages
	}
	why := fmt.Sprintf("the PDFs the request sent had more pages than the provider's limit of %d", limit)
	return replaceFiles(s, picked, why, e)
}

var stPlaceholderFresh = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the PDFs the failed request was the first to send, which the provider could not process, by a text saying what was removed"}

// whyNotProcessed is the reason a PDF the provider could not process gets
// in its placeholder.
const whyNotProcessed = "the provider could not process it (\"" + opencode.TextPDFUnprocessable + "\")"

var stPlaceholderImage = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the images the failed request was the first to send, which the provider could not process, by a text saying what was removed"}

// replaceFreshImages is SF181's repair: the images opencode.UnprocessedImages
// names (those the failed request was the first to send, none while a retry
// the provider asked for has not been made) are replaced by placeholders
// quoting the provider's text.
func replaceFreshImages(s *store.Session, e env) ([]store.Edit, error) {
	images, m := opencode.UnprocessedImages(s)
	if len(images) == 0 {
		return nil, nil
	}
	return replaceFiles(s, images, fmt.Sprintf("the provider could not process it (%q)", m.Get("error.data.message").String()), e)
}

var stPlaceholderSize = Strategy{Name: "placeholder", Mutations: "replaceMedia",
	Doc: "replace the files the failed request was the first to send, which the provider refused for the request's size, by a text saying what was removed"}

// whyRefusedForSize is the reason a file the provider refused for the
// request's size gets in its placeholder.
const whyRefusedForSize = "the provider refused the request that first sent it for its size"

// replaceFresh is SF179's and SF180's repair: when the session's last
// attempt failed with an error of type t, the files its request was the
// first to send (opencode.FreshFiles; opencode.FreshPDFs when pdfs) are
// replaced by placeholders saying why. For SF180 that brings the files the
// next request sends back to those of the last request the provider
// accepted. A session whose last attempt did not fail so has nothing to
// replace.
func replaceFresh(s *store.Session, t opencode.ErrorType, pdfs bool, why string, e env) ([]store.Edit, error) {
	m := opencode.LastFailedWith(s, t)
	if m == nil {
		return nil, nil
	}
	var files []opencode.File
	if pdfs {
		files = opencode.FreshPDFs(s, m)
	} else {
		files, _ = opencode.FreshFiles(s, m)
	}
	if len(files) == 0 {
		return nil, nil
	}
	return replaceFiles(s, files, why, e)
}

// replaceFiles replaces the files picked (user file parts, or attachments
// of tool results) by placeholders saying why.
func replaceFiles(s *store.Session, picked []opencode.File, why string, e env) ([]store.Edit, error) {
	chosen := map[string]map[int]bool{}
	var order []opencode.File
	for _, f := range picked {
		if chosen[f.PartID] == nil {
			chosen[f.PartID] = map[int]bool{}
			order = append(order, f)
		}
		chosen[f.PartID][f.Attachment] = true
	}
	var out []store.Edit
	for _, f := range order {
		m, p := s.Message(f.MessageID), opencode.FindPart(s, f.MessageID, f.PartID)
		if m == nil || p == nil {
			return nil, errNotApplicable
		}
		picked := chosen[p.ID]
		eds, err := replaceParts(s, m, p, e, func(i int, _, _ string) string {
			if picked[i] {
				return why
			}
			return ""
		})
		if err != nil {
			return nil, err
		}
		out = append(out, eds...)
	}
	return out, nil
}
