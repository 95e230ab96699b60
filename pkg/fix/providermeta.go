package fix

import (
	"fmt"

	"github.com/tidwall/sjson"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// The repairs of provider state OpenCode keeps in part metadata and replays:
// OpenAI Responses item ids and encrypted reasoning, Gemini thought
// signatures. Each was found by experiment with OpenCode 1.18.33 against
// the strict mocks (internal/opencodetest/OBSERVED.md, "Breaks, rejections
// and repairs"): removing the key makes OpenCode's next request one the API
// accepts, and nothing else in the part changes.

var (
	stDropEncrypted  = Strategy{Name: "drop-encrypted", Mutations: "dropEncryptedReasoning", Doc: "remove the encrypted content opencode replays from reasoning parts (metadata.openai.reasoningEncryptedContent); opencode then leaves that reasoning out"}
	stDropItemIDs    = Strategy{Name: "drop-item-ids", Mutations: "dropItemIDs", Doc: "remove provider item ids (metadata.openai.itemId) from every part, so opencode sends the items inline instead of by reference"}
	stDropSignatures = Strategy{Name: "drop-signatures", Mutations: "dropThoughtSignatures", Doc: "remove gemini thought signatures (metadata.google) from function calls; the calls go unsigned, which gemini accepts outside the current turn"}
)

// dropPartMeta removes metadata.<ns>.<key> from a part, or metadata.<ns>
// whole when key is "". No other byte of the part changes but the member
// and its separator.
func dropPartMeta(m *store.Message, p *store.Part, ns, key, mutation, reason string) ([]store.Edit, error) {
	path := "metadata." + escapePath(ns)
	if key != "" {
		path += "." + escapePath(key)
	}
	after, err := sjson.DeleteBytes(append([]byte(nil), p.Raw...), path)
	if err != nil {
		return nil, fmt.Errorf("part %s: %w", p.ID, err)
	}
	ed := partEdit(store.OpUpdate, m, p, mutation, reason)
	ed.After = after
	return []store.Edit{ed}, nil
}

// dropEncryptedReasoning removes the encrypted content from the message's
// reasoning parts that carry it.
func dropEncryptedReasoning(m *store.Message) ([]store.Edit, error) {
	var out []store.Edit
	for _, p := range m.Parts {
		if !opencode.HasEncryptedReasoning(p) {
			continue
		}
		ns, _, _ := opencode.ProviderMeta(p, "reasoningEncryptedContent")
		eds, err := dropPartMeta(m, p, ns, "reasoningEncryptedContent", "dropEncryptedReasoning",
			"encrypted reasoning the provider refuses removed")
		if err != nil {
			return nil, err
		}
		out = append(out, eds...)
	}
	return out, nil
}

// dropItemIDs removes the provider item id from every part of the message
// that keeps one.
func dropItemIDs(m *store.Message) ([]store.Edit, error) {
	var out []store.Edit
	for _, p := range m.Parts {
		ns, _, ok := opencode.ProviderMeta(p, "itemId")
		if !ok {
			continue
		}
		eds, err := dropPartMeta(m, p, ns, "itemId", "dropItemIDs", "provider item id the provider does not hold removed")
		if err != nil {
			return nil, err
		}
		out = append(out, eds...)
	}
	return out, nil
}

// dropThoughtSignatures removes the provider metadata holding a thought
// signature from every tool part of the message that has one.
func dropThoughtSignatures(m *store.Message) ([]store.Edit, error) {
	var out []store.Edit
	for _, p := range m.Parts {
		if !opencode.HasThoughtSignature(p) {
			continue
		}
		ns, _, _ := opencode.ProviderMeta(p, "thoughtSignature")
		eds, err := dropPartMeta(m, p, ns, "", "dropThoughtSignatures", "thought signature the provider refuses removed")
		if err != nil {
			return nil, err
		}
		out = append(out, eds...)
	}
	return out, nil
}

// recordStrats are error-driven recovery's strategies for the defects the
// records hold (opencode.Defect.InRecords). A session-wide defect is repaired on
// every message before until (the failed attempt; "" for all) that shows
// it; the others on the target message.
func recordStrats(d opencode.Defect, target, until, reason string) []strat {
	each := func(st Strategy, mut func(w *work, m *store.Message) ([]store.Edit, error)) strat {
		return strat{st, func(w *work) ([]store.Edit, error) {
			var msgs []*store.Message
			if d.SessionWide() {
				msgs = d.ShowsFrom(w.s, target, until)
			} else if m := w.s.Message(target); m != nil && d.Shows(w.s, m) {
				msgs = []*store.Message{m}
			}
			if len(msgs) == 0 {
				return nil, errNotApplicable
			}
			var out []store.Edit
			for _, m := range msgs {
				eds, err := mut(w, m)
				if err != nil {
					return nil, err
				}
				out = append(out, eds...)
			}
			return out, nil
		}}
	}
	exclude := each(stExclude, func(w *work, m *store.Message) ([]store.Edit, error) {
		return excludeMessage(w.s, m, reason, w.env)
	})
	encrypted := each(stDropEncrypted, func(_ *work, m *store.Message) ([]store.Edit, error) { return dropEncryptedReasoning(m) })
	switch d {
	case opencode.DefectReasoningMissing:
		return []strat{each(stReasoning, func(w *work, m *store.Message) ([]store.Edit, error) {
			return giveReasoning(w.s, m, w.env)
		}), exclude}
	case opencode.DefectNoFollowing:
		return []strat{encrypted, exclude}
	case opencode.DefectUnverified:
		return []strat{encrypted}
	case opencode.DefectItemIDs:
		return []strat{each(stDropItemIDs, func(_ *work, m *store.Message) ([]store.Edit, error) { return dropItemIDs(m) })}
	case opencode.DefectThoughtSignature:
		return []strat{each(stDropSignatures, func(_ *work, m *store.Message) ([]store.Edit, error) { return dropThoughtSignatures(m) })}
	case opencode.DefectForeignCallIDs:
		return []strat{each(stRekeyCallIDs, func(w *work, m *store.Message) ([]store.Edit, error) { return rekeyCallIDs(w.s, m) })}
	case opencode.DefectToolUseIDs:
		return []strat{each(stRekeyToolUseIDs, func(w *work, m *store.Message) ([]store.Edit, error) { return rekeyToolUseIDs(w.s, m) })}
	case opencode.DefectToolInputCut:
		return []strat{each(stCutOff, func(w *work, m *store.Message) ([]store.Edit, error) { return markToolsCutOff(m, w.env) }), exclude}
	case opencode.DefectBedrockSignature:
		// What OpenCode sends once the signatures are gone (it leaves
		// unsigned reasoning out), without unsigned parts left behind; the
		// final tool-loop message, which Claude refuses without thinking,
		// is excluded instead.
		return []strat{each(stStrip, func(w *work, m *store.Message) ([]store.Edit, error) {
			if finalToolLoop(w.s, m) {
				return excludeMessage(w.s, m, reason, w.env)
			}
			return stripThinkingParts(w.s, m, nil)
		})}
	case opencode.DefectCopilotSignature:
		// The same, from the message Copilot names on; a signature kept
		// for Copilot's Chat Completions API (OpenCode 1.1) is dropped
		// from the part that holds it, which keeps the reasoning's text.
		return []strat{each(stStrip, func(w *work, m *store.Message) ([]store.Edit, error) {
			if finalToolLoop(w.s, m) {
				return excludeMessage(w.s, m, reason, w.env)
			}
			return dropCopilotSignatures(w.s, m)
		})}
	}
	return nil
}

// dropCopilotSignatures removes what OpenCode sends GitHub Copilot as the
// signature of a message's thinking: the signed thinking parts sent to its
// Messages API (stripThinkingParts: OpenCode leaves unsigned reasoning
// out), and metadata.copilot.reasoningOpaque, which OpenCode 1.1 sends its
// Chat Completions API as reasoning_opaque, from the parts left.
func dropCopilotSignatures(s *store.Session, m *store.Message) ([]store.Edit, error) {
	var out []store.Edit
	if opencode.OwnsSignedThinking(m) {
		eds, err := stripThinkingParts(s, m, opencode.IsSigned)
		if err != nil {
			return nil, err
		}
		out = eds
	}
	for _, p := range m.Parts {
		if !opencode.HasCopilotOpaque(p) || (opencode.IsThinkingPart(p) && opencode.IsSigned(p)) {
			continue
		}
		eds, err := dropPartMeta(m, p, "copilot", "reasoningOpaque", "dropThoughtSignatures",
			"copilot reasoning signature the provider refuses removed")
		if err != nil {
			return nil, err
		}
		out = append(out, eds...)
	}
	return out, nil
}
