package storetest

import "github.com/sessfix/sessfix/pkg/store"

// NewMessage builds a message in memory, with no store behind it: body is
// its JSON and each of parts the JSON of one part, given the ids ID-a,
// ID-b, … in order.
func NewMessage(id, role, body string, parts ...string) *store.Message {
	m := &store.Message{Record: store.Record{Kind: store.KindMessage, ID: id, Raw: []byte(body)}, Role: role}
	for i, p := range parts {
		pid := id + "-" + string(rune('a'+i))
		pt := &store.Part{Record: store.Record{Kind: store.KindPart, ID: pid, Raw: []byte(p)}, MessageID: id}
		pt.Type = pt.Get("type").String()
		m.Parts = append(m.Parts, pt)
	}
	return m
}
