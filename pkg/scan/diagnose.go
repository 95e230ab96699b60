package scan

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// Diagnosis is what a provider error means for one session: its class, the
// index it names, the stored message and part that index maps to, and the
// findings on that message.
type Diagnosis struct {
	SessionID string             `json:"session"`
	Error     string             `json:"error"`
	ErrorType opencode.ErrorType `json:"error_type"`
	// Index is the first index in the error, in ExtractIndex's spelling
	// ("" for none).
	Index string `json:"index"`
	// ItemID is the first provider item or call id in the error (rs_…,
	// fc_…, msg_…, call_…; "" for none): it maps to a part by the id the
	// part stores.
	ItemID string `json:"item_id"`
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
	// Findings are the session's findings on the mapped message, but for
	// SF302 (the stored error itself).
	Findings []Finding `json:"findings"`
	// Causes are, for an error that names no message, the preflight's
	// findings that produce it (ErrorCauses); empty otherwise.
	Causes []Finding `json:"causes"`
	// Rules are, for an error of no provider error class, the codes of the
	// rules it is recognised as (MarkedRules: OpenCode's own errors); its
	// Causes are then the session's findings of those rules.
	Rules []string `json:"rules"`
	// Shows are, for an error whose defect the repair looks for on every
	// message (Defect.SessionWide), the stored messages before the failed
	// attempt that show it; empty otherwise.
	Shows []string `json:"shows"`
	// Resolved says why the problem a stored failed attempt's error
	// describes is gone from the session (Resolved); "" while it is
	// not, and for an error the session does not store.
	Resolved string `json:"resolved"`

	where, showsWhat string
}

// Mapped reports whether the error's index names a stored message.
func (d *Diagnosis) Mapped() bool { return d.MessageID != "" }

// Diagnose classifies a provider error and maps its index to the stored
// message and part through the preflight's conversion (ReadError): against
// the request that failed when the session stores the failed attempt, else
// against the history and the user's next prompt. An error that names no
// message is mapped to the preflight findings that produce it.
func Diagnose(s *store.Session, text string, opts *Options) *Diagnosis {
	opts.ReadPackages(s)
	failed := opencode.FailedAttempt(s, text)
	r := opencode.ReadError(s, text, failed)
	d := &Diagnosis{SessionID: s.ID, Error: text, ErrorType: r.Type, Index: r.Index, ItemID: r.ItemID,
		MessageID: r.TargetID, PartID: r.PartID, Findings: []Finding{}, Causes: []Finding{}, Shows: []string{}, Rules: []string{}}
	until := ""
	if failed != nil {
		d.FailedMessage = failed.ID
		until = failed.ID
	}
	switch {
	case !r.Names():
		d.Why = "the error names no index or item id, so it points at no message"
	case r.MapErr != nil:
		d.Why = r.MapErr.Error()
	}
	d.where = r.Where()
	all := CheckSession(s, opts)
	var others []Finding
	for _, f := range all {
		if f.Code != SF302 {
			others = append(others, f)
		}
		if d.MessageID != "" && f.MessageID == d.MessageID && f.Code != SF302 {
			d.Findings = append(d.Findings, f)
		}
	}
	if r.Type != opencode.ErrorNone {
		var oc *ocenv.Resolver
		if opts != nil {
			oc = opts.OpenCode
		}
		if why, ok := Resolved(r, s, others, oc); ok && failed != nil {
			d.Resolved = why
		} else if !ok && r.Defect.SessionWide() {
			for _, m := range r.Showing(s, until) {
				d.Shows = append(d.Shows, m.ID)
			}
			d.showsWhat = r.Defect.What()
		} else if !ok && !r.Names() {
			d.Causes = append(d.Causes, ErrorCauses(others, text)...)
		}
	} else if codes := MarkedRules(text); len(codes) > 0 {
		d.Rules = codes
		d.Causes = append(d.Causes, MarkedCauses(others, codes)...)
	}
	if d.Resolved != "" {
		// Once repaired, the index may name another block of the message.
		d.PartID = ""
	}
	if m := s.Message(d.MessageID); m != nil {
		d.Role = m.Role
		if p := opencode.FindPart(s, d.MessageID, d.PartID); p != nil {
			d.PartType = p.Type
		}
	}
	return d
}

// Describe is one line saying where the index or item id points.
func (d *Diagnosis) Describe() string {
	where := d.where
	if where == "" {
		where = d.Index
	}
	var s string
	switch {
	case where == "" && d.ErrorType != opencode.ErrorNone && d.Resolved == "" && len(d.Shows) == 0:
		return CausesNote(d.Causes)
	case where == "" && len(d.Rules) > 0:
		if len(d.Causes) == 0 {
			return MarkedNoneNote(d.Rules)
		}
		return CausesNote(d.Causes)
	case where == "":
		s = "the error names no message"
	case !d.Mapped():
		s = fmt.Sprintf("%s does not map to a stored message: %s", where, d.Why)
	default:
		s = fmt.Sprintf("%s is stored %s message %s", where, d.Role, d.MessageID)
		if d.PartID != "" {
			s += fmt.Sprintf(", %s part %s", d.PartType, d.PartID)
		}
	}
	if len(d.Shows) > 0 {
		what := "message shows"
		if len(d.Shows) != 1 {
			what = "messages show"
		}
		s += fmt.Sprintf("; %d %s %s: %s", len(d.Shows), what, d.showsWhat, strings.Join(d.Shows, ", "))
	}
	return s
}
