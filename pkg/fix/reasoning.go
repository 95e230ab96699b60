package fix

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The repair of DeepSeek's and Kimi's thinking-mode rule (SF163, and SF302
// with a reasoning_content error): a tool step OpenCode sends without
// reasoning_content, or with "" (OBSERVED.md, "What the rules rest on").
// Their reasoning is not signed, so a step can be given reasoning: OpenCode
// then sends a non-empty reasoning_content, the tool call and its output
// stay in the request, and the request is valid whatever the provider's
// exact rule (current turn or every turn, "" accepted or not).

// NotRecordedText is the text of the reasoning part sessfix gives a tool
// step whose reasoning was never stored: neutral, and sent to the model as
// that step's reasoning_content.
const NotRecordedText = "(reasoning not recorded)"

var stReasoning = Strategy{Name: "reasoning", Mutations: "prependThinkingPart+adoptCurrentModel",
	Doc: "give each tool step that goes to deepseek or kimi without reasoning a synthetic reasoning part, \"" + NotRecordedText + "\", " +
		"so opencode sends a non-empty reasoning_content and the tool calls and outputs stay; a step of another model is first marked as the current model's, " +
		"since opencode sends another model's reasoning as text"}

// giveReasoning repairs one assistant message for a reasoning_content
// model: when it is another model's, it is marked as the current model's
// (adoptCurrentModel: OpenCode sends another model's reasoning as text);
// then every step with a tool call and no reasoning text gets a synthetic
// reasoning part right after its step-start (prependThinkingPart).
func giveReasoning(s *store.Session, m *store.Message, e env) ([]store.Edit, error) {
	if m.Role != "assistant" {
		return nil, errNotApplicable
	}
	var out []store.Edit
	pid, mid := sent.CurrentModel(s)
	if pid == "" || mid == "" || sent.FamilyIn(s, pid, mid) != sent.Chat || !sent.RequiresReasoningContent(pid, mid) {
		// Only a reasoning_content API takes unsigned reasoning; a session
		// that has moved on to another family keeps its steps as they are.
		return nil, errNotApplicable
	}
	if m.Get("providerID").String() != pid || m.Get("modelID").String() != mid {
		ed, err := adoptCurrentModel(m, pid, mid)
		if err != nil {
			return nil, err
		}
		out = append(out, ed)
	}
	for _, st := range opencode.StepRanges(m) {
		tools, reasoning := false, false
		for _, p := range m.Parts[st[0]:st[1]] {
			tools = tools || p.Type == "tool"
			reasoning = reasoning || (p.Type == "reasoning" && strings.TrimSpace(opencode.PartText(p)) != "")
		}
		if !tools || reasoning {
			continue
		}
		ed, err := stepReasoning(s, m, st, e)
		if err != nil {
			return nil, err
		}
		out = append(out, ed)
	}
	if len(out) == 0 {
		return nil, errNotApplicable
	}
	return out, nil
}

// adoptCurrentModel sets an assistant message's providerID and modelID to
// the model its session goes to now. Nothing else of the message changes.
func adoptCurrentModel(m *store.Message, providerID, modelID string) (store.Edit, error) {
	was := m.Get("providerID").String() + "/" + m.Get("modelID").String()
	after, err := setJSON(m.Raw, providerID, "providerID")
	if err == nil {
		after, err = setJSON(after, modelID, "modelID")
	}
	if err != nil {
		return store.Edit{}, fmt.Errorf("message %s: %w", m.ID, err)
	}
	ed := messageEdit(store.OpUpdate, m, "adoptCurrentModel",
		fmt.Sprintf("step of %s marked as %s/%s's, so opencode sends its reasoning as reasoning_content", was, providerID, modelID))
	ed.After = after
	return ed, nil
}

// stepReasoning adds a synthetic reasoning part reading NotRecordedText to
// the step st of m, sorting after the step's leading meta parts and before
// its first content part.
func stepReasoning(s *store.Session, m *store.Message, st [2]int, e env) (store.Edit, error) {
	first := st[0]
	for first < st[1] && opencode.IsMetaPart(m.Parts[first]) {
		first++
	}
	return addReasoning(s, m, first, NotRecordedText, nil, e, "synthetic reasoning for a tool step whose reasoning was not recorded")
}
