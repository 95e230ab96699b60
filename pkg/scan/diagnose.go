package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
)

// Diagnosis is what a provider error means for one session: its class, the
// index it names, the stored message and part that index maps to, and the
// findings on that message.
type Diagnosis struct {
	SessionID string    `json:"session"`
	Error     string    `json:"error"`
	ErrorType ErrorType `json:"error_type"`
	// Index is the first messages.N(.content.M) in the error ("" for none).
	Index string `json:"index"`
	// FailedMessage is the stored assistant message whose error is this
	// text (the failed attempt), "" when the session holds none: the index
	// is then read against the history and the prompt that was not stored.
	FailedMessage string `json:"failed_message"`
	// MessageID and PartID are the stored records the index maps to; both
	// empty when it does not map (Why says why).
	MessageID string `json:"message_id"`
	PartID    string `json:"part_id"`
	Role      string `json:"role"`
	PartType  string `json:"part_type"`
	Why       string `json:"why"`
	// Findings are the session's findings on the mapped message.
	Findings []Finding `json:"findings"`
}

// Mapped reports whether the error's index names a stored message.
func (d *Diagnosis) Mapped() bool { return d.MessageID != "" }

// FailedAttempt returns the stored assistant message whose provider error
// matches text (the newest one), or nil. Texts match when either contains
// the other once trimmed, so a pasted error with a prefix still matches.
func FailedAttempt(s *store.Session, text string) *store.Message {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || ErrorName(m) == "" {
			continue
		}
		stored := strings.TrimSpace(m.Get("error.data.message").String())
		if stored != "" && (strings.Contains(stored, t) || strings.Contains(t, stored)) {
			return m
		}
	}
	return nil
}

// Diagnose classifies a provider error and maps its index to the stored
// message and part through the preflight's conversion: against the request
// that failed when the session stores the failed attempt, else against the
// history and the user's next prompt.
func Diagnose(s *store.Session, text string, opts *Options) *Diagnosis {
	d := &Diagnosis{SessionID: s.ID, Error: text, ErrorType: DetectErrorType(text), Index: ExtractIndex(text)}
	ro := RequestOptions{AsOfError: true}
	if m := FailedAttempt(s, text); m != nil {
		d.FailedMessage = m.ID
		ro.Until = m.ID
	} else {
		ro.NextPrompt = true
	}
	if d.Index == "" {
		d.Why = "the error names no messages.N index, so it points at no message"
	} else {
		req := BuildRequest(s, ro)
		id, part, err := req.LocateIndex(d.Index)
		if err != nil {
			d.Why = err.Error()
		} else {
			d.MessageID, d.PartID = id, part
		}
	}
	if m := s.Message(d.MessageID); m != nil {
		d.Role = m.Role
		if p := findPart(s, d.MessageID, d.PartID); p != nil {
			d.PartType = p.Type
		}
		for _, f := range CheckSession(s, opts) {
			if f.MessageID == d.MessageID {
				d.Findings = append(d.Findings, f)
			}
		}
	}
	return d
}

// Describe is one line saying where the index points.
func (d *Diagnosis) Describe() string {
	if !d.Mapped() {
		return fmt.Sprintf("%s does not map to a stored message: %s", orIndex(d.Index), d.Why)
	}
	s := fmt.Sprintf("%s is stored %s message %s", d.Index, d.Role, d.MessageID)
	if d.PartID != "" {
		s += fmt.Sprintf(", %s part %s", d.PartType, d.PartID)
	}
	return s
}

func orIndex(i string) string {
	if i == "" {
		return "the error"
	}
	return i
}
