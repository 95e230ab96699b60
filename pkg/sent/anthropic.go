package sent

import (
	"regexp"
	"slices"
	"strings"
)

var toolIDUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// toolIDSafe reports whether id has nothing toolIDUnsafe would replace
// (the usual case: the regexp is only run when it has work to do).
func toolIDSafe(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (c *converter) toolID(id string) string {
	if strings.Contains(c.modelID, "claude") {
		return ClaudeToolID(id)
	}
	return id
}

// ClaudeToolID is a tool call id as OpenCode 1.18.33 sends it to a Claude
// model: every byte the Messages API does not take in a tool_use id
// (^[a-zA-Z0-9_-]+$) replaced by _. An empty id stays empty.
func ClaudeToolID(id string) string {
	if toolIDSafe(id) {
		return id
	}
	return toolIDUnsafe.ReplaceAllString(id, "_")
}

// groupedMessages is the Anthropic and Bedrock packages' conversion: user
// and tool messages in a row form one user message, assistant messages in a
// row one assistant message. In 1.18 Bedrock's package also leaves out text that is
// only whitespace unless the step sends signed reasoning next to it.
func (c *converter) groupedMessages(model []modelMsg) []Message {
	type group struct {
		role string
		msgs []modelMsg
	}
	// A group is a run of consecutive model messages with the same role:
	// a subslice of model.
	var groups []group
	start := 0
	for i, mm := range model {
		role := mm.role
		if role == "tool" {
			role = "user"
		}
		if n := len(groups); n > 0 && groups[n-1].role == role {
			groups[n-1].msgs = model[start : i+1 : i+1]
			continue
		}
		start = i
		groups = append(groups, group{role: role, msgs: model[i : i+1 : i+1]})
	}
	out := make([]Message, 0, len(groups))
	for gi, g := range groups {
		pm := Message{Role: g.role}
		n := 0
		for _, mm := range g.msgs {
			n += len(mm.content)
		}
		if n > 1 {
			pm.Blocks = make([]Block, 0, n)
		}
		for mi, mm := range g.msgs {
			if mm.src != "" && (len(pm.Sources) == 0 || pm.Sources[len(pm.Sources)-1] != mm.src) && !slices.Contains(pm.Sources, mm.src) {
				pm.Sources = append(pm.Sources, mm.src)
			}
			blankDropped := c.family == Bedrock && c.v == V118 && g.role == "assistant" && !c.sendsSigned(mm)
			for k, it := range mm.content {
				b := it.block("")
				switch it.kind {
				case "text":
					if blankDropped && strings.TrimSpace(it.text) == "" {
						continue
					}
					b.Type, b.Text = "text", it.text
					if g.role == "assistant" && gi == len(groups)-1 && mi == len(g.msgs)-1 && k == len(mm.content)-1 {
						b.Text = strings.TrimSpace(b.Text)
					}
				case "file":
					b.Type = it.fileType()
				case "reasoning":
					b.Type, b.Text = "thinking", it.text
					sig, red := c.signature(it)
					switch {
					case sig != nil:
						b.Signature = *sig
					case red != nil:
						b.Type, b.Signature = "redacted_thinking", *red
					default:
						pm.Dropped = append(pm.Dropped, b)
						continue
					}
				case "tool-call":
					b.Type, b.ToolUseID = "tool_use", c.toolID(it.toolID)
				case "tool-result":
					b.Type, b.ToolUseID, b.IsError = "tool_result", c.toolID(it.toolID), it.isError
				default:
					continue
				}
				pm.Blocks = append(pm.Blocks, b)
			}
		}
		if len(pm.Blocks) == 0 {
			pm.Blocks = nil // as when nothing was appended
		}
		out = append(out, pm)
	}
	return out
}

// sendsSigned reports whether a model message sends signed reasoning.
func (c *converter) sendsSigned(mm modelMsg) bool {
	for _, it := range mm.content {
		if it.kind == "reasoning" && c.signedFor(it) {
			return true
		}
	}
	return false
}

// signature returns the signature or redacted data the SDK sends for
// reasoning (nil when it has neither and the block is left out).
func (c *converter) signature(it item) (sig, redacted *string) {
	ns, ok := c.signatureNS(it)
	if !ok {
		return nil, nil
	}
	if v := it.part.Get(ns.signature); notNull(v) {
		s := v.String()
		return &s, nil
	}
	for _, k := range []string{ns.redactedData, ns.redactedContent} {
		if v := it.part.Get(k); notNull(v) {
			s := v.String()
			return nil, &s
		}
	}
	return nil, nil
}
