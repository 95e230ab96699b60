package fix

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/opencodetest/testpdf"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

func pdfOf(name string, pages int, xrefStream bool) storetest.Image {
	raw := testpdf.Write(testpdf.Options{Pages: pages, XRefStream: xrefStream})
	return storetest.Image{Mime: "application/pdf", Filename: name, Base64: base64.StdEncoding.EncodeToString(raw)}
}

// A user attached PDFs of 50, 60 and 10 pages: 120 pages, over the 100
// pages of a model with a 200k-token window (a warning: the model's
// window is not known), under 600. SF177 points at the 60-page PDF, and
// the repair replaces that one only: 60 pages are still sent.
func TestPDFsOverPageLimitReplaceTheLongest(t *testing.T) {
	s := imageSession(t, store.ShapeStorage, pdfOf("a.pdf", 50, false), pdfOf("b.pdf", 60, true), pdfOf("c.pdf", 10, false))
	f := fs0(scan.CheckSession(s, scanOpts()), "SF177")
	if f.Fix != "replaceMedia" || f.PartID != storetest.ImagePartID(2) || f.Severity != scan.Warning ||
		f.ProviderError != "A maximum of 100 PDF pages may be provided." || f.ErrorType != "pdf_pages" {
		t.Fatalf("SF177 should warn at the 60-page PDF with replaceMedia: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	parts := fixed.Message(storetest.ImageUserID).Parts
	types := []string{parts[1].Get("type").String(), parts[2].Get("type").String(), parts[3].Get("type").String()}
	if types[0] != "file" || types[1] != "text" || types[2] != "file" ||
		!strings.HasPrefix(parts[2].Get("text").String(), "[sessfix removed the file b.pdf (application/pdf, ") ||
		!strings.Contains(parts[2].Get("text").String(), "more pages than the provider's limit of 100") {
		t.Fatalf("after the repair: %v / %.300s", types, parts[2].Raw)
	}
	if f := fs0(scan.CheckSession(fixed, scanOpts()), "SF177"); f.Code != "" {
		t.Fatalf("SF177 after the repair: %+v", f)
	}
}

// Over 600 pages SF177 is an error at the 600-page limit, and the repair
// brings the request within 600.
func TestPDFsOverLargePageLimit(t *testing.T) {
	s := imageSession(t, store.ShapeStorage, pdfOf("big.pdf", 650, true), pdfOf("small.pdf", 30, false))
	f := fs0(scan.CheckSession(s, scanOpts()), "SF177")
	if f.Severity != scan.Error || f.PartID != storetest.ImagePartID(1) || f.ProviderError != opencode.PDFPagesText(600) {
		t.Fatalf("SF177 should be an error at the 650-page PDF: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	parts := fixed.Message(storetest.ImageUserID).Parts
	if parts[1].Get("type").String() != "text" || parts[2].Get("type").String() != "file" {
		t.Fatalf("after the repair: %.200s / %.200s", parts[1].Raw, parts[2].Raw)
	}
}

// A PDF a tool returned (the read tool's attachment) counts too, and the
// repair takes it out of the tool result.
func TestToolPDFOverPageLimit(t *testing.T) {
	fx := storetest.ToolImageSession(pdfOf("manual.pdf", 140, false))
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF177")
	if f.Code == "" || f.Fix != "replaceMedia" {
		t.Fatalf("SF177 should report the tool's PDF: %v", scan.CheckSession(s, scanOpts()))
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	p := opencode.FindPart(fixed, f.MessageID, f.PartID)
	if p == nil || len(p.Get("state.attachments").Array()) != 0 || !strings.Contains(p.Get("state.output").String(), opencode.MediaRemovedMark) {
		t.Fatalf("the tool result still sends its PDF: %.300s", p.Raw)
	}
}

// Right after the failed attempt, the stored error (the API's text)
// plans the same repair, which then reads as resolved; a pasted error
// (`fix --error`) too.
func TestStoredPDFPageErrorReplacesTheLongest(t *testing.T) {
	images := []storetest.Image{pdfOf("a.pdf", 80, false), pdfOf("b.pdf", 30, true)}
	repairStoredError(t, images, "A maximum of 100 PDF pages may be provided.", "pdf_pages", storetest.ImagePartID(1))

	s := imageSession(t, store.ShapeStorage, images...)
	p, err := PlanFromError(s, `{"type":"error","error":{"type":"invalid_request_error","message":"A maximum of 100 PDF pages may be provided."}}`, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != storetest.ImagePartID(1) || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the pasted error: %v edits %+v unfixed %+v notes %v", err, p.Changes.Edits, p.Unfixed, p.Notes)
	}
}

// A text file with a .pdf name, attached by the user: SF178 predicts the
// API's text at the document block, and the repair replaces that file
// only; the real PDF beside it is still sent. Right after the failed
// attempt the stored error plans the same repair.
func TestInvalidPDFReplaced(t *testing.T) {
	notes := storetest.Image{Mime: "application/pdf", Filename: "notes.pdf", Base64: base64.StdEncoding.EncodeToString([]byte("meeting notes, not a PDF\n"))}
	images := []storetest.Image{pdfOf("real.pdf", 3, false), notes}
	s := imageSession(t, store.ShapeStorage, images...)
	f := fs0(scan.CheckSession(s, scanOpts()), "SF178")
	if f.Fix != "replaceMedia" || f.PartID != storetest.ImagePartID(2) || f.Severity != scan.Error || f.ErrorType != "invalid_pdf" ||
		!strings.HasSuffix(f.ProviderError, ".pdf.source.base64.data: The PDF specified was not valid.") || !strings.HasPrefix(f.ProviderError, f.Index+".") {
		t.Fatalf("SF178 should report notes.pdf with the API's text: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	parts := fixed.Message(storetest.ImageUserID).Parts
	if parts[1].Get("type").String() != "file" || parts[2].Get("type").String() != "text" ||
		!strings.HasPrefix(parts[2].Get("text").String(), "[sessfix removed the file notes.pdf (application/pdf, 25 bytes): its data is not a PDF") {
		t.Fatalf("after the repair: %.200s / %.300s", parts[1].Raw, parts[2].Raw)
	}

	repairStoredError(t, images, f.ProviderError, "invalid_pdf", storetest.ImagePartID(2))
}

// A tool returned a file typed PDF that is none: SF178 without a
// provider_error (the API's path there is not known); a pasted error text
// still finds it, and the repair takes it out of the tool result.
func TestToolInvalidPDF(t *testing.T) {
	notes := storetest.Image{Mime: "application/pdf", Filename: "notes.pdf", Base64: base64.StdEncoding.EncodeToString([]byte("plain text\n"))}
	fx := storetest.ToolImageSession(notes)
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF178")
	if f.Code == "" || f.Fix != "replaceMedia" || f.ProviderError != "" {
		t.Fatalf("SF178 should report the tool's file without a provider_error: %+v", f)
	}
	p, err := PlanFromError(s, "messages.2.content.0.tool_result.content.1.pdf.source.base64.data: The PDF specified was not valid.", planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != f.PartID || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the pasted error: %v edits %+v unfixed %+v notes %v", err, p.Changes.Edits, p.Unfixed, p.Notes)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	if tp := opencode.FindPart(fixed, f.MessageID, f.PartID); tp == nil || len(tp.Get("state.attachments").Array()) != 0 {
		t.Fatalf("the tool result still sends the file: %+v", tp)
	}
}

// repairStoredError stores text as the failed attempt of an image session
// of images (its answer replaced by a refused assistant message), wants
// SF302 to name replaceMedia for an error of errType, plans from that
// finding alone one edit of part wantPart, and wants nothing above info
// after it.
func repairStoredError(t *testing.T, images []storetest.Image, text, errType, wantPart string) {
	t.Helper()
	repairStoredErrorOn(t, "anthropic", "claude-sonnet-4-5", images, text, errType, wantPart)
}

// repairStoredErrorOn is repairStoredError with the session's messages on
// another provider and model.
func repairStoredErrorOn(t *testing.T, provider, model string, images []storetest.Image, text, errType, wantPart string) {
	t.Helper()
	repairStoredErrorNamed(t, "APIError", provider, model, images, text, errType, wantPart)
}

// repairStoredErrorNamed is repairStoredErrorOn with the stored error's
// name (OpenCode 1.18.33 stores a 413 as a ContextOverflowError).
func repairStoredErrorNamed(t *testing.T, name, provider, model string, images []storetest.Image, text, errType, wantPart string) {
	t.Helper()
	repairStoredErrorWith(t, name, provider, model, images, text, errType, wantPart, "replaceMedia")
}

// repairStoredErrorWith is repairStoredErrorNamed with the mutation the
// stored error must name (wantFix); it returns the repaired session.
func repairStoredErrorWith(t *testing.T, name, provider, model string, images []storetest.Image, text, errType, wantPart, wantFix string) *store.Session {
	t.Helper()
	fx := storetest.ImageSession(images...)
	id := gjson.GetBytes(fx.Messages[1].Body, "id").String()
	fx.Messages[1].Body = []byte(`{"id":"` + id + `","role":"assistant","parentID":"` + storetest.ImageUserID + `","providerID":"` + provider + `","modelID":"` + model + `","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225604000,"completed":1767225605000},` +
		`"error":{"name":"` + name + `","data":{"message":` + jsonString(text) + `,"statusCode":400,"isRetryable":false}}}`)
	fx.Messages[1].Parts = nil
	fx.Messages[0].Body = []byte(strings.NewReplacer(`"providerID":"anthropic"`, `"providerID":"`+provider+`"`, `"modelID":"claude-sonnet-4-5"`, `"modelID":"`+model+`"`).Replace(string(fx.Messages[0].Body)))
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	stored := fs0(scan.CheckSession(s, scanOpts()), "SF302")
	if stored.Fix != wantFix || stored.ErrorType != errType || stored.Severity != scan.Error {
		t.Fatalf("SF302 should name %s for %s: %+v", wantFix, errType, stored)
	}
	p, err := Plan(s, []scan.Finding{stored}, planOpts())
	if err != nil || len(p.Changes.Edits) != 1 || p.Changes.Edits[0].ID != wantPart || len(p.Unfixed) != 0 {
		t.Fatalf("plan from the stored error: %v %+v unfixed %+v", err, p.Fixed, p.Unfixed)
	}
	fixed, err := ApplyInMemory(s, p.Changes)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range scan.CheckSession(fixed, scanOpts()) {
		if g.Severity != scan.Info {
			t.Errorf("after the repair: %s %s %q", g.Severity, g.Code, g.Message)
		}
	}
	return fixed
}

// A PDF sessfix cannot count (a header, then no cross-reference table it
// can follow) is not passed over in silence: SF177 says so at info, with
// the reason, and plans nothing; a real PDF beside it is counted as
// before. A pasted page-limit error does not take the info finding for
// its cause.
func TestUncountedPDFReported(t *testing.T) {
	damaged := storetest.Image{Mime: "application/pdf", Filename: "scan.pdf",
		Base64: base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer garbage\n"))}
	s := imageSession(t, store.ShapeStorage, pdfOf("a.pdf", 5, false), damaged)
	var got []scan.Finding
	for _, f := range scan.CheckSession(s, scanOpts()) {
		if f.Code == "SF177" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || got[0].Severity != scan.Info || got[0].PartID != storetest.ImagePartID(2) || got[0].Fix != "" ||
		!strings.HasPrefix(got[0].Message, "sessfix cannot count this PDF's pages (") {
		t.Fatalf("want one info SF177 on scan.pdf, got %+v", got)
	}
	p, err := PlanFromError(s, `{"type":"error","error":{"type":"invalid_request_error","message":"A maximum of 100 PDF pages may be provided."}}`, planOpts())
	if err != nil || !p.Empty() {
		t.Fatalf("a pasted page-limit error plans %+v (%v): the uncounted PDF is no known cause", p.Changes.Edits, err)
	}
	if len(p.Unfixed) != 1 || !strings.Contains(p.Unfixed[0].Reason, opencode.NoCauseNoteIn(opencode.ErrorPDFPages, s.ID, s.Store.Path)) {
		t.Errorf("a pasted page-limit error should say what to do instead: %+v", p.Unfixed)
	}
}
