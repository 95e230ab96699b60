package fix

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

var testNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

const sesID = "ses_7f0000000000AAAAAAAAAAAAAA"

// sb builds in-memory sessions in one shape for tests.
type sb struct {
	t *testing.T
	s *store.Session
}

func newSB(t *testing.T, shape store.Shape) *sb {
	return &sb{t: t, s: &store.Session{Store: store.Info{Shape: shape, Path: "/store"}, ID: sesID}}
}

// body renders fields (a JSON object) in the shape's formatting, with the
// ids the shape stores in bodies placed first.
func (b *sb) body(ids [][2]string, fields string) []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	n := 0
	if b.s.Store.Shape != store.ShapeSQLite {
		for _, kv := range ids {
			if n > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(kv[0])
			v, _ := json.Marshal(kv[1])
			buf.Write(k)
			buf.WriteByte(':')
			buf.Write(v)
			n++
		}
	}
	inner := bytes.TrimSpace([]byte(fields))
	inner = bytes.TrimSuffix(bytes.TrimPrefix(inner, []byte("{")), []byte("}"))
	if len(bytes.TrimSpace(inner)) > 0 && n > 0 {
		buf.WriteByte(',')
	}
	buf.Write(inner)
	buf.WriteByte('}')
	var out bytes.Buffer
	var err error
	if b.s.Store.Shape == store.ShapeSQLite {
		err = json.Compact(&out, buf.Bytes())
	} else {
		err = json.Indent(&out, buf.Bytes(), "", "  ")
	}
	if err != nil {
		b.t.Fatalf("bad test body %s: %v", buf.Bytes(), err)
	}
	return out.Bytes()
}

func (b *sb) msg(id, role, fields string) *store.Message {
	raw := b.body([][2]string{{"id", id}, {"sessionID", sesID}}, fields)
	m, err := store.NewMessage(store.Record{ID: id, Raw: raw, Loc: store.Location{Path: "/store/" + id}}, sesID)
	if err != nil {
		b.t.Fatal(err)
	}
	b.s.Messages = append(b.s.Messages, m)
	return m
}

func (b *sb) part(m *store.Message, id, fields string) *store.Part {
	raw := b.body([][2]string{{"id", id}, {"sessionID", sesID}, {"messageID", m.ID}}, fields)
	p, err := store.NewPart(store.Record{ID: id, Raw: raw, Loc: store.Location{Path: "/store/" + id}}, m.ID, sesID)
	if err != nil {
		b.t.Fatal(err)
	}
	m.Parts = append(m.Parts, p)
	return p
}

// complete gives every record of the session the keys OpenCode's schema
// requires that the test left out (SF206's backfill: the values OpenCode
// writes), so tests about other rules hold records OpenCode could load.
func (b *sb) complete() *sb {
	b.t.Helper()
	info := b.s.Info
	if info == nil {
		// Where the session ran: an assistant message's path.
		b.s.Info = &store.Record{Kind: store.KindSession, ID: sesID, Raw: []byte(`{"directory":"/work","projectID":"global"}`)}
	}
	rs := opencode.SessionSchema(b.s)
	b.s.Info = info
	for _, r := range rs {
		if len(r.Left) > 0 || len(r.Unservable) > 0 {
			b.t.Fatalf("test record %s does not fit opencode's schema: %v %v", r.Record().ID, r.Left, r.Unservable)
		}
		rec := *r.Record()
		rec.Raw = r.Body
		if r.Part != nil {
			p, err := store.NewPart(rec, r.Part.MessageID, r.Part.SessionID)
			if err != nil {
				b.t.Fatal(err)
			}
			*r.Part = *p
			continue
		}
		m, err := store.NewMessage(rec, r.Message.SessionID)
		if err != nil {
			b.t.Fatal(err)
		}
		m.Parts = r.Message.Parts
		*r.Message = *m
	}
	return b
}

func testEnv() env { return env{now: testNow, placeholder: DefaultPlaceholder} }

// ids used by tests: valid OpenCode ids that sort in the order of their names.
const (
	msgU1 = "msg_a00000000001AAAAAAAAAAAAAA"
	msgA1 = "msg_a00000000002AAAAAAAAAAAAAA"
	msgU2 = "msg_a00000000003AAAAAAAAAAAAAA"
	msgA2 = "msg_a00000000004AAAAAAAAAAAAAA"
	prt1  = "prt_a00000000001AAAAAAAAAAAAAA"
	prt2  = "prt_a00000000002AAAAAAAAAAAAAA"
	prt3  = "prt_a00000000003AAAAAAAAAAAAAA"
	prt4  = "prt_a00000000004AAAAAAAAAAAAAA"
	prt5  = "prt_a00000000005AAAAAAAAAAAAAA"
	prt6  = "prt_a00000000006AAAAAAAAAAAAAA"
)

const asstFields = `{"role":"assistant","parentID":"` + msgU1 + `","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":1763726400000}}`

const signedMeta = `"metadata":{"anthropic":{"signature":"sig-abc"}}`

func onlyEdit(t *testing.T) func([]store.Edit, error) store.Edit {
	return func(eds []store.Edit, err error) store.Edit {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if len(eds) != 1 {
			t.Fatalf("got %d edits, want 1: %+v", len(eds), eds)
		}
		return eds[0]
	}
}
