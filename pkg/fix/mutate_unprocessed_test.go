package fix

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// unprocessedSession is ImageSession with old.pdf accepted in its first
// turn, and a second turn that attaches new.pdf and whose attempt failed
// with Anthropic's "Could not process PDF".
func unprocessedSession(t *testing.T, shape store.Shape) *store.Session {
	t.Helper()
	fx := storetest.ImageSession(pdfOf("old.pdf", 2, false))
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	newPDF := pdfOf("new.pdf", 3, true)
	u := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000300000000000003","role":"user","time":{"created":1767225605000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`)}
	u.Parts = append(u.Parts,
		storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000300000000000000","type":"text","text":"and this one"}`)},
		storetest.Part{Body: json.RawMessage(`{"id":"prt_00000000000300000000000001","type":"file","mime":"application/pdf","filename":"new.pdf","url":` + q("data:application/pdf;base64,"+newPDF.Base64) + `}`)})
	a := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000400000000000004","role":"assistant","parentID":"msg_00000000000300000000000003","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225606000,"completed":1767225607000},` +
		`"error":{"name":"APIError","data":{"message":` + q(opencode.TextPDFUnprocessable) + `,"statusCode":400,"isRetryable":false}}}`)}
	fx.Messages = append(fx.Messages, u, a)
	return storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, shape, t.TempDir(), fx)))[0]
}

// The API could not process a PDF and names none: SF179 names the PDF the
// failed request was the first to send (new.pdf), not old.pdf, which an
// accepted request already held; SF302 maps the stored error to it; the
// repair replaces new.pdf only, and after it nothing above info is left.
func TestUnprocessedPDFReplaced(t *testing.T) {
	for _, shape := range []store.Shape{store.ShapeStorage, store.ShapeSQLite} {
		t.Run(string(shape), func(t *testing.T) {
			s := unprocessedSession(t, shape)
			fs := scan.CheckSession(s, scanOpts())
			var got []string
			for _, f := range fs {
				if f.Code == scan.SF179 {
					got = append(got, f.PartID)
					if f.Fix != "replaceMedia" || f.Severity != scan.Error || f.ErrorType != "pdf_unprocessable" || !strings.Contains(f.Message, "new.pdf") {
						t.Errorf("SF179: %+v", f)
					}
				}
			}
			if strings.Join(got, " ") != "prt_00000000000300000000000001" {
				t.Fatalf("SF179 names %v, want new.pdf's part only\n%v", got, codes(fs))
			}
			if f := fs0(fs, "SF302"); f.Fix != "replaceMedia" || f.ErrorType != "pdf_unprocessable" || f.Severity != scan.Error {
				t.Fatalf("SF302 should map the stored error to replaceMedia: %+v", f)
			} else if !strings.Contains(f.Message, "the failed request was the first to send 1 PDF that causes it: message ") ||
				strings.Contains(f.Message, "preflight") {
				// The cause is read from the stored attempt, not predicted.
				t.Errorf("SF302 should say where the cause comes from: %s", f.Message)
			}
			fixed := fixAndRecheck(t, s, "placeholder")
			if p := fixed.Message("msg_00000000000300000000000003").Parts[1]; p.Get("type").String() != "text" ||
				!strings.HasPrefix(p.Get("text").String(), "[sessfix removed the file new.pdf (application/pdf, ") ||
				!strings.Contains(p.Get("text").String(), "Could not process PDF") {
				t.Errorf("new.pdf: %.300s", p.Raw)
			}
			if p := fixed.Message(storetest.ImageUserID).Parts[1]; p.Get("type").String() != "file" {
				t.Errorf("old.pdf was replaced too: %.200s", p.Raw)
			}
			for _, f := range scan.CheckSession(fixed, scanOpts()) {
				if f.Severity != scan.Info {
					t.Errorf("after the repair: %s %s %s", f.Severity, f.Code, f.Message)
				}
			}
		})
	}
}

// A refusal whose PDFs an accepted request had all sent before is traced
// to none: no SF179, and SF302 plans no change.
func TestUnprocessedPDFAlreadyAccepted(t *testing.T) {
	fx := storetest.ImageSession(pdfOf("old.pdf", 2, false))
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	u := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000300000000000003","role":"user","time":{"created":1767225605000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-4-5"}}`),
		Parts: []storetest.Part{{Body: json.RawMessage(`{"id":"prt_00000000000300000000000000","type":"text","text":"go on"}`)}}}
	a := storetest.Message{Body: json.RawMessage(`{"id":"msg_00000000000400000000000004","role":"assistant","parentID":"msg_00000000000300000000000003","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225606000,"completed":1767225607000},` +
		`"error":{"name":"APIError","data":{"message":` + q(opencode.TextPDFUnprocessable) + `,"statusCode":400,"isRetryable":false}}}`)}
	fx.Messages = append(fx.Messages, u, a)
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeStorage, t.TempDir(), fx)))[0]
	fs := scan.CheckSession(s, scanOpts())
	if f := fs0(fs, "SF179"); f.Code != "" {
		t.Fatalf("SF179 names a PDF an accepted request held: %+v", f)
	}
	if f := fs0(fs, "SF302"); f.ErrorType != "pdf_unprocessable" || f.Fix != "" || !strings.HasSuffix(f.Message, opencode.PDFNoCauseNote) {
		t.Fatalf("SF302: %+v", f)
	}
	p, err := Plan(s, fs, planOpts())
	if err != nil || !p.Empty() {
		t.Fatalf("plan: %v %+v", err, p.Fixed)
	}
}

// The read tool returned a PDF and the next step's request was refused:
// the PDF is in the tool result of the last step the provider answered,
// which that step's own request did not hold, so SF179 names it; the
// repair takes it out of the tool result and says so in its output.
func TestUnprocessedPDFFromATool(t *testing.T) {
	fx := storetest.ToolImageSession(pdfOf("manual.pdf", 4, false))
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	last := &fx.Messages[len(fx.Messages)-1]
	id := "msg_00000000000300000000000003"
	last.Body = json.RawMessage(`{"id":"` + id + `","role":"assistant","parentID":"` + storetest.ImageUserID + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","mode":"build","agent":"build",` +
		`"path":{"cwd":"/work/x","root":"/work/x"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1767225603000,"completed":1767225603500},` +
		`"error":{"name":"APIError","data":{"message":` + q(opencode.TextPDFUnprocessable) + `,"statusCode":400,"isRetryable":false}}}`)
	last.Parts = nil
	for i, p := range fx.Messages[1].Parts {
		fx.Messages[1].Parts[i].Body = json.RawMessage(strings.ReplaceAll(string(p.Body), "big.png", "manual.pdf"))
	}
	s := storetest.LoadAll(t, storetest.OpenOne(t, storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), fx)))[0]
	f := fs0(scan.CheckSession(s, scanOpts()), "SF179")
	if f.PartID != storetest.ToolImagePartID || f.Fix != "replaceMedia" || !strings.Contains(f.Message, "manual.pdf") {
		t.Fatalf("SF179 should name the read tool's PDF: %+v", f)
	}
	fixed := fixAndRecheck(t, s, "placeholder")
	p := opencode.FindPart(fixed, storetest.ImageAsstID, storetest.ToolImagePartID)
	if n := len(p.Get("state.attachments").Array()); n != 0 || !strings.Contains(p.Get("state.output").String(), "Could not process PDF") {
		t.Fatalf("the tool result after the repair: %.400s", p.Raw)
	}
	for _, g := range scan.CheckSession(fixed, scanOpts()) {
		if g.Severity != scan.Info {
			t.Errorf("after the repair: %s %s %s", g.Severity, g.Code, g.Message)
		}
	}
}
