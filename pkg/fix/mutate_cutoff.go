package fix

import (
	"slices"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// ToolCutOffError is the error markToolCutOff writes on a call the output
// limit cut off: OpenCode's abort text, then why, so the model sees that its
// own output was too long rather than that the call was interrupted.
const ToolCutOffError = opencode.ToolAbortedText + ": the model's output hit its length limit (finish \"length\") " +
	"before this call's input was complete, so the call was not run; write smaller calls " +
	"(split a large file or patch into several)"

var stCutOff = Strategy{Name: "cut-off", Mutations: "markToolCutOff", Doc: "rewrite the tool to opencode's own abort shape with an error saying the model's output hit its length limit; an input that is not a json object becomes {} (its text kept in the tool's metadata)"}

// markToolCutOff rewrites a tool call the output limit cut off
// (opencode.CutToolInputs) to the shape OpenCode writes when it aborts a tool
// (status "error", metadata.interrupted true, time.end; time.start set when
// the tool never started), with ToolCutOffError as its error. An input that
// is not a JSON object becomes {}, its text kept in
// state.metadata.truncatedInput. Other parts are left alone.
func markToolCutOff(m *store.Message, p *store.Part, e env) ([]store.Edit, error) {
	if !slices.Contains(opencode.CutToolInputs(m), p) {
		return nil, nil
	}
	ed, err := cutOffEdit(m, p, e)
	if err != nil {
		return nil, err
	}
	return []store.Edit{ed}, nil
}

// markToolsCutOff applies markToolCutOff to every part of the message the
// output limit cut off, in part order.
func markToolsCutOff(m *store.Message, e env) ([]store.Edit, error) {
	cut := opencode.CutToolInputs(m)
	var out []store.Edit
	for _, p := range m.Parts {
		if !slices.Contains(cut, p) {
			continue
		}
		ed, err := cutOffEdit(m, p, e)
		if err != nil {
			return nil, err
		}
		out = append(out, ed)
	}
	return out, nil
}

// cutOffEdit is markToolCutOff's edit of p, a call the output limit cut off.
func cutOffEdit(m *store.Message, p *store.Part, e env) (store.Edit, error) {
	after, err := abortShape(p, ToolCutOffError, e, func(set func(v any, keys ...string)) {
		if !opencode.InputIsObject(p) {
			set(p.Get("state.input").String(), "state", "metadata", "truncatedInput")
			set(obj(), "state", "input")
		}
	})
	if err != nil {
		return store.Edit{}, err
	}
	ed := partEdit(store.OpUpdate, m, p, "markToolCutOff", "tool call cut off by the output limit marked failed")
	ed.After = after
	return ed, nil
}
