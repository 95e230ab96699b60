package surgery

import (
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// nextRequest builds the request OpenCode would send for the session's next
// prompt: the preflight's request (sent.Build, the same mapping of
// every provider index to the stored message and part that scan, diagnose
// and fix --error use), with the user's next prompt, from the history as
// OpenCode holds it once its revert cleanup has deleted what the pending
// revert covers.
func nextRequest(s *store.Session, rv *Revert) *Sent {
	from := s
	applied := false
	if rs := revertedSet(s, rv); len(rs.messages)+len(rs.parts) > 0 {
		from, applied = withoutReverted(s, rs), true
	}
	req := sent.Build(from, sent.Options{NextPrompt: true})
	out := &Sent{
		ProviderID: req.ProviderID, ModelID: req.ModelID, Kind: req.Kind, Conversion: req.Version,
		Thinking: req.Thinking, RevertApplied: applied,
	}
	for n, pm := range req.Messages {
		sm := SentMessage{Index: n, Label: req.Index(n, -1), Role: pm.Role, Sources: append([]string{}, pm.Sources...)}
		for m, b := range pm.Blocks {
			if b.MessageID == "" {
				sm.NextPrompt = true
			}
			sb := sentBlock(m, b)
			sb.Label = req.BlockIndex(n, m)
			sm.Blocks = append(sm.Blocks, sb)
		}
		for _, b := range pm.Dropped {
			sm.Dropped = append(sm.Dropped, sentBlock(-1, b))
		}
		out.Messages = append(out.Messages, sm)
	}
	return out
}

func sentBlock(i int, b sent.Block) SentBlock {
	sb := SentBlock{Index: i, Type: b.Type, ToolUseID: b.ToolUseID, IsError: b.IsError, MessageID: b.MessageID, PartID: b.PartID}
	if (b.Type == "text" || b.Type == "thinking") && b.MessageID != "" {
		sb.Size = len(b.Text)
	}
	sb.Signed = b.Type == "thinking" && b.Signature != ""
	return sb
}

// withoutReverted is a copy of the session without what the revert
// deletes: the records' bytes are shared, the slices are not.
func withoutReverted(s *store.Session, rs reverted) *store.Session {
	c := *s
	c.Messages = nil
	for _, m := range s.Messages {
		if rs.messages[m.ID] {
			continue
		}
		mc := *m
		mc.Parts = nil
		for _, p := range m.Parts {
			if !rs.parts[p.ID] {
				mc.Parts = append(mc.Parts, p)
			}
		}
		c.Messages = append(c.Messages, &mc)
	}
	return &c
}
