package fix

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/backup"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// fakePDF is n bytes that start like a PDF.
func fakePDF(n int) []byte {
	b := bytes.Repeat([]byte("0123456789 obj stream endobj\n"), n/29+1)[:n]
	copy(b, "%PDF-1.7\n")
	return b
}

// A part row over SF503's threshold (an attached PDF, base64 in a data:
// URL) is moved out through the write transaction: the backup run keeps
// the PDF decoded as payloads/<part>-report.pdf before the row changes,
// the part becomes a text naming that file, the session's other records
// stay, the dry-run diff summarises the base64, and undo puts every row
// back byte for byte.
func TestMoveOutOversizedPayload(t *testing.T) {
	pdf := fakePDF(300 << 10)
	path := storetest.Materialize(t, store.ShapeSQLite, t.TempDir(), storetest.ImageSession(
		storetest.Image{Mime: "application/pdf", Filename: "report.pdf", Base64: base64.StdEncoding.EncodeToString(pdf)}))
	before := storetest.State(t, path, store.ShapeSQLite)

	p := testPipeline(t)
	p.Scan.Oversized = 100 << 10
	p.Fix.Scan = p.Scan
	st := storetest.OpenOne(t, path)
	res, err := scan.Run(context.Background(), []store.Store{st}, p.Scan)
	if err != nil {
		t.Fatal(err)
	}
	if f := fs0(res.Findings, "SF503"); f.Fix != "moveOutPayload" || f.PartID != storetest.ImagePartID(1) {
		t.Fatalf("scan should report the part with moveOutPayload: %+v", f)
	}
	targets, err := p.Targets(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, p.Plan, targets)
	if len(got) != 1 || !got[0].Changes() || len(got[0].Plan.Changes.Edits) != 1 {
		t.Fatalf("plan: %+v", got)
	}
	ed := got[0].Plan.Changes.Edits[0]
	if ed.Mutation != "moveOutPayload" || ed.Payload == nil || ed.Payload.Name != storetest.ImagePartID(1)+"-report.pdf" {
		t.Fatalf("edit %s %+v", ed.Mutation, ed.Payload)
	}
	var diff bytes.Buffer
	if err := Diff(&diff, got[0].Plan.Changes); err != nil {
		t.Fatal(err)
	}
	if diff.Len() > 8<<10 || !strings.Contains(diff.String(), "bytes of base64, sha256 ") {
		t.Errorf("the diff does not summarise the base64 (%d bytes):\n%.2000s", diff.Len(), diff.String())
	}

	run, err := p.Apply(context.Background(), st, got)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := os.ReadFile(filepath.Join(p.Write.Backup.Dir, "backups", run, "payloads", ed.Payload.Name))
	if err != nil || !bytes.Equal(kept, pdf) {
		t.Fatalf("the backup run does not keep the PDF (%v, %d bytes, want %d)", err, len(kept), len(pdf))
	}
	s := storetest.LoadAll(t, storetest.OpenOne(t, path))[0]
	part := s.Message(storetest.ImageUserID).Parts[1]
	text := part.Get("text").String()
	if part.Get("type").String() != "text" || !strings.HasPrefix(text, "[sessfix moved the file report.pdf (application/pdf, about 0.3 MB) out of this session") ||
		!strings.Contains(text, "payloads/"+ed.Payload.Name) || len(part.Raw) > 2048 {
		t.Fatalf("part after the move: %.500s", part.Raw)
	}
	if fs := scan.OversizedParts(s, p.Scan); len(fs) != 0 {
		t.Errorf("still oversized: %+v", fs)
	}
	if _, err := backup.Undo(context.Background(), p.Write.Backup, run, false); err != nil {
		t.Fatal(err)
	}
	if after := storetest.State(t, path, store.ShapeSQLite); after != before {
		t.Fatal("undo did not put the rows back byte for byte")
	}
}

// A tool result's oversized attachment leaves the result, whose output
// names the file; a part without base64 media is left alone.
func TestMoveOutToolAttachment(t *testing.T) {
	big := base64.StdEncoding.EncodeToString(fakePDF(200 << 10))
	s := toolImageSession(t, storetest.Image{Mime: "application/pdf", Base64: big}, storetest.Image{Mime: "image/png", Base64: storetest.NoisyPNG(t, 3, 4, 4)})
	m := s.Message(storetest.ImageAsstID)
	p := toolPart(t, s)
	eds, err := moveOutPayload(s, m, p, env{now: testNow})
	if err != nil || len(eds) != 1 || eds[0].Payload == nil || eds[0].Payload.Name != p.ID+"-media.pdf" || string(eds[0].Payload.Base64) != big {
		t.Fatalf("move-out: %v %+v", err, eds)
	}
	after := gjson.ParseBytes(eds[0].After)
	if atts := after.Get("state.attachments").Array(); len(atts) != 1 || atts[0].Get("mime").String() != "image/png" {
		t.Errorf("attachments after: %s", after.Get("state.attachments").Raw)
	}
	if out := after.Get("state.output").String(); !strings.HasPrefix(out, "Image read successfully\n\n[sessfix moved the file (application/pdf, about 0.2 MB)") {
		t.Errorf("output %q", out)
	}
	if _, err := moveOutPayload(s, s.Message(storetest.ImageUserID), s.Message(storetest.ImageUserID).Parts[0], env{now: testNow}); err != errNotApplicable {
		t.Errorf("a text part: %v", err)
	}
}
