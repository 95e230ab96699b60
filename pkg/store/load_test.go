package store

import (
	"testing"
)

// A reader that holds its records by value allocates nothing for a usable
// record besides its Message or Part (the Record is not copied to the heap
// first), and still files an unusable one under Broken, with its error
// and, for a part, its message.
func TestAddRecordByValue(t *testing.T) {
	msg := []byte(`{"role":"user","time":{"created":5}}`)
	part := []byte(`{"type":"text","text":"hi"}`)
	record := func(kind Kind, id string, raw []byte) Record {
		r := Record{Kind: kind, ID: id, Raw: raw}
		r.Check()
		return r
	}
	m, p := record(KindMessage, "msg_1", msg), record(KindPart, "prt_1", part)
	var s Session
	if n := testing.AllocsPerRun(100, func() {
		s.Messages = s.Messages[:0]
		if s.AddMessageRecord(m, "ses_1") == nil {
			t.Fatal("a usable message was not added")
		}
	}); n != 1 {
		t.Errorf("AddMessageRecord of a usable message: %v allocations, want 1 (the Message)", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if s.MakePartRecord(p, "msg_1", "ses_1") == nil {
			t.Fatal("a usable part was not made")
		}
	}); n != 1 {
		t.Errorf("MakePartRecord of a usable part: %v allocations, want 1 (the Part)", n)
	}

	var b Session
	if b.AddMessageRecord(record(KindMessage, "msg_2", []byte(`{"time":{}}`)), "ses_1") != nil {
		t.Fatal("a message without a role was added")
	}
	if b.MakePartRecord(record(KindPart, "prt_2", []byte(`{"type":`)), "msg_2", "ses_1") != nil {
		t.Fatal("a truncated part was made")
	}
	if len(b.Broken) != 2 || b.Broken[0].ID != "msg_2" || b.Broken[0].Err == nil ||
		b.Broken[1].ID != "prt_2" || b.Broken[1].Err == nil || b.Broken[1].Parent != "msg_2" {
		t.Fatalf("broken records: %+v", b.Broken)
	}
}
