package fix

import (
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// firstContent is the index of the message's first content part, or -1.
func firstContent(m *store.Message) int {
	for i, p := range m.Parts {
		if scan.IsContentPart(p) {
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

// findPartIn finds a part in the message it belongs to (a part id may be
// used under two messages: SF211), else anywhere in the session.
func findPartIn(s *store.Session, messageID, id string) (*store.Message, *store.Part) {
	if m := s.Message(messageID); m != nil {
		for _, p := range m.Parts {
			if p.ID == id {
				return m, p
			}
		}
	}
	return findPart(s, id)
}

func msgIndex(s *store.Session, id string) int {
	for i, m := range s.Messages {
		if m.ID == id {
			return i
		}
	}
	return -1
}
