package export

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/internal/atomicfile"
	"github.com/sessfix/sessfix/internal/atomicfile/atomicfiletest"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/writertest"
)

// utf16Bytes is s in UTF-16 (big-endian when be), after bom.
func utf16Bytes(s string, bom []byte, be bool) []byte {
	out := append([]byte{}, bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		if be {
			out = binary.BigEndian.AppendUint16(out, u)
		} else {
			out = binary.LittleEndian.AppendUint16(out, u)
		}
	}
	return out
}

// encodings are the ways an export file reaches sessfix: Windows
// PowerShell 5's `>` (UTF-16LE with a BOM), other Windows tools (UTF-16
// without a BOM, big-endian, a UTF-8 BOM).
var encodings = []struct {
	name string
	enc  func(string) []byte
}{
	{"utf-8 bom", func(s string) []byte { return append([]byte("\xef\xbb\xbf"), s...) }},
	{"utf-16le bom", func(s string) []byte { return utf16Bytes(s, []byte{0xff, 0xfe}, false) }},
	{"utf-16le", func(s string) []byte { return utf16Bytes(s, nil, false) }},
	{"utf-16be bom", func(s string) []byte { return utf16Bytes(s, []byte{0xfe, 0xff}, true) }},
}

// TestExportEncodingsReadAndWrittenBack: an export file in UTF-16 or with a
// byte order mark is read as its text (the records' bytes are the UTF-8
// file's), and an edit writes it back in its own encoding, BOM and CRLF
// included: the file is exactly the UTF-8 result encoded the same way, the
// planned image is what Apply writes, and restoring the image read before
// gives back the original bytes.
func TestExportEncodingsReadAndWrittenBack(t *testing.T) {
	ctx := context.Background()
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			plain := newExportFixture(t, true)
			text := bytes.ReplaceAll(plain.doc, []byte(`"hi"`), []byte(`"héllo 😀"`))
			text = bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))
			atomicfiletest.WriteFile(t, plain.info.Path, string(text), 0o600)
			plain.doc = text

			f := newExportFixture(t, true)
			orig := e.enc(string(text))
			atomicfiletest.WriteFile(t, f.info.Path, string(orig), 0o600)
			if ok, why, err := (Shape{}).Match(f.info.Path); !ok || err != nil {
				t.Fatalf("Match = false (%s, %v)", why, err)
			}
			if !(Shape{}).Candidate(f.info.Path) {
				t.Fatal("not a candidate in a directory scan")
			}
			st := openExport(f.info.Path)
			refs, err := st.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := st.Load(ctx, refs[0])
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(sess.Messages[0].Parts[0].Raw), string(plain.raw(t, "messages.0.parts.0")); got != want {
				t.Errorf("part read as %q, want %q", got, want)
			}
			if notes := strings.Join(st.Info().Notes, "\n"); !strings.Contains(notes, "writes it back in the same encoding") {
				t.Errorf("no note names the encoding: %q", notes)
			}

			before := plain.raw(t, "messages.1.parts.1")
			after := bytes.Replace(before, []byte(`"text": ""`), []byte(`"text": "[user interrupted] é"`), 1)
			edits := func() *store.ChangeSet {
				return &store.ChangeSet{Store: f.info, SessionID: writertest.Ses, Edits: []store.Edit{
					{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: before, After: after},
					{Op: store.OpAdd, Kind: store.KindPart, ID: writertest.PrtNew, MessageID: writertest.MsgB, After: []byte(`{"id":"` + writertest.PrtNew + `","type":"text","text":"ü"}`)},
				}}
			}
			wantText, err := plain.apply(t, edits().Edits...)
			if err != nil {
				t.Fatal(err)
			}

			w := newExportWriter(f.info, atomicfile.OS{})
			cs := edits()
			targets, err := w.Targets(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			images, err := w.Read(ctx, targets)
			if err != nil {
				t.Fatal(err)
			}
			planned, err := w.Planned(ctx, cs, images)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Apply(ctx, cs); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(f.info.Path)
			if want := e.enc(string(wantText)); !bytes.Equal(got, want) {
				t.Errorf("written file is not the UTF-8 result in its encoding:\ngot  %q\nwant %q", got, want)
			}
			if !bytes.Equal(planned[0].Data, got) {
				t.Error("the planned image is not what Apply wrote")
			}
			if err := w.Restore(ctx, images); err != nil {
				t.Fatal(err)
			}
			if back, _ := os.ReadFile(f.info.Path); !bytes.Equal(back, orig) {
				t.Error("restoring the image read before did not give back the original bytes")
			}
		})
	}
}

// TestExportUTF16NotRoundTrippingIsRefused: a UTF-16 file whose text would
// not encode back to its own bytes (an unpaired surrogate) is read, but
// never rewritten: the refusal names the file and the conversion.
func TestExportUTF16NotRoundTrippingIsRefused(t *testing.T) {
	f := newExportFixture(t, true)
	doc := utf16Bytes(string(f.doc), []byte{0xff, 0xfe}, false)
	at := bytes.Index(doc, utf16Bytes("hi", nil, false))
	binary.LittleEndian.PutUint16(doc[at:], 0xd800) // a lone high surrogate instead of 'h'
	atomicfiletest.WriteFile(t, f.info.Path, string(doc), 0o600)
	before := f.raw(t, "messages.1.parts.1")
	after := bytes.Replace(before, []byte(`"text": ""`), []byte(`"text": "x"`), 1)
	out, err := f.apply(t, store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: before, After: after})
	if err == nil || !strings.Contains(err.Error(), f.info.Path) || !strings.Contains(err.Error(), "iconv -f UTF-16 -t UTF-8") {
		t.Fatalf("err = %v, want a refusal naming the file and iconv", err)
	}
	var ce *store.ChangedError
	if errors.As(err, &ce) {
		t.Fatalf("refused as a change: %v", err)
	}
	if !bytes.Equal(out, doc) {
		t.Error("the file was written")
	}
}

// TestExportUTF16NeverWritesWhatWouldNotReadBack: an edit whose bytes are
// not valid UTF-8 (a cut through a character) cannot be held by a UTF-16
// file: written, it would read back as U+FFFD, not as the edit. It is
// refused, nothing written, in UTF-16; the UTF-8 encodings keep its bytes
// as they are, and read them back.
func TestExportUTF16NeverWritesWhatWouldNotReadBack(t *testing.T) {
	for _, e := range encodings {
		t.Run(e.name, func(t *testing.T) {
			f := newExportFixture(t, true)
			orig := e.enc(string(f.doc))
			atomicfiletest.WriteFile(t, f.info.Path, string(orig), 0o600)
			before := f.raw(t, "messages.1.parts.1")
			after := bytes.Replace(before, []byte(`"text": ""`), []byte("\"text\": \"caf\xc3\""), 1)
			out, err := f.apply(t, store.Edit{Op: store.OpUpdate, Kind: store.KindPart, ID: writertest.Prt3, MessageID: writertest.MsgB, Before: before, After: after})
			if !strings.HasPrefix(e.name, "utf-16") {
				if err != nil || !bytes.Contains(out, []byte("caf\xc3\"")) {
					t.Errorf("%s: err %v, the edit's bytes written: %v", e.name, err, bytes.Contains(out, []byte("caf\xc3\"")))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
				t.Errorf("err = %v, want a refusal", err)
			}
			if !bytes.Equal(out, orig) {
				text, _, _ := decode(out)
				t.Errorf("the file was written; it reads back as %q", gjson.GetBytes(text, "messages.1.parts.1.text").Str)
			}
		})
	}
}
