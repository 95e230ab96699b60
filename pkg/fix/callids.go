package fix

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// stRekeyCallIDs repairs tool call ids a Mistral model refuses: OpenCode
// sends a tool part's callID as the call's id and as its result's
// tool_call_id, so one new id in the part changes both.
var stRekeyCallIDs = Strategy{Name: "rekey-call-ids", Mutations: "rekeyCallIDs",
	Doc: "give every tool call whose id is not nine letters or digits one that is, derived from the old id and unique in the session; the call and its result keep sharing it"}

// rekeyCallIDs sets the callID of the message's tool parts whose id is not
// of Mistral's form to the one opencode.MistralCallIDs maps it to: the
// map is the session's, so a session repaired message by message gets one
// id per old id and no id twice.
func rekeyCallIDs(s *store.Session, m *store.Message) ([]store.Edit, error) {
	ids := opencode.MistralCallIDs(s)
	return setCallIDs(m, "rekeyCallIDs", func(p *store.Part) (string, bool) {
		return ids[p.Get("callID").String()], opencode.ForeignCallID(p)
	}, func(old, id string) string { return fmt.Sprintf("tool call id %s given mistral's form %s", old, id) })
}

// setCallIDs gives each tool part of m that newID picks the callID it
// returns, one edit of mutation each, described by why(old, new).
func setCallIDs(m *store.Message, mutation string, newID func(p *store.Part) (string, bool), why func(old, id string) string) ([]store.Edit, error) {
	var out []store.Edit
	for _, p := range m.Parts {
		id, ok := newID(p)
		if !ok {
			continue
		}
		after, err := setJSON(p.Raw, id, "callID")
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.ID, err)
		}
		ed := partEdit(store.OpUpdate, m, p, mutation, why(p.Get("callID").String(), id))
		ed.After = after
		out = append(out, ed)
	}
	return out, nil
}

// stRekeyToolUseIDs repairs tool call ids the Messages API refuses, empty
// ones and ids an earlier call has too: OpenCode sends a tool part's
// callID as the tool_use id and as its tool_result's tool_use_id, so one
// new id in the part changes both.
var stRekeyToolUseIDs = Strategy{Name: "rekey-tool-use-ids", Mutations: "rekeyToolUseIDs",
	Doc: "give every tool call whose id is empty or shared with an earlier call a new one of its own (toolu_sessfix_ and the part's id); the call and its result keep sharing it"}

// rekeyToolUseIDs sets a new callID (opencode.NewToolUseID) on the
// message's tool parts whose id the Messages API refuses
// (opencode.BadToolUseIDs); the first call with an id keeps it.
func rekeyToolUseIDs(s *store.Session, m *store.Message) ([]store.Edit, error) {
	bad := opencode.BadToolUseIDs(s)
	return setCallIDs(m, "rekeyToolUseIDs", func(p *store.Part) (string, bool) {
		return opencode.NewToolUseID(p.ID), bad[p.ID]
	}, func(old, id string) string {
		return fmt.Sprintf("tool call id %q, empty or shared with an earlier call, given %s", old, id)
	})
}
