package fix

import (
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// firstContent is the index of the message's first content part, or -1.
func firstContent(m *store.Message) int {
	for i, p := range m.Parts {
		if opencode.IsContentPart(p) {
			return i
		}
	}
	return -1
}

func findPart(s *store.Session, id string) (*store.Message, *store.Part) {
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.ID == id {
				return m, p
			}
		}
	}
	return nil, nil
}

func msgIndex(s *store.Session, id string) int {
	for i, m := range s.Messages {
		if m.ID == id {
			return i
		}
	}
	return -1
}
