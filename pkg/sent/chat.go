package sent

// chatMessages is @ai-sdk/openai-compatible's Chat Completions shape after
// OpenCode's ProviderTransform: the system prompt first, then user messages
// as they are, one assistant message per step (its text joined as content,
// its calls as tool_calls) and one tool message per result.
//
// Reasoning goes back as the assistant message's reasoning_content. For an
// interleaved model OpenCode moves the step's reasoning into the field
// itself and always sends it ("" when the step has none); otherwise the
// package sends the joined reasoning only when it is not empty, and a step
// without reasoning goes without the field.
func (c *converter) chatMessages(model []modelMsg, interleaved bool) []Message {
	out := []Message{{Role: "system"}}
	for _, mm := range model {
		src := srcOf(mm)
		if mm.role == "tool" {
			for _, it := range mm.content {
				b := it.block("tool_result")
				b.ToolUseID, b.IsError = c.chatToolID(it.toolID), it.isError
				out = append(out, Message{Role: "tool", Sources: src, Blocks: []Block{b}})
			}
			continue
		}
		pm := Message{Role: mm.role, Sources: src}
		var reasoning []Block
		joined := ""
		for _, it := range mm.content {
			b := it.block("")
			switch it.kind {
			case "text":
				b.Type, b.Text = "text", it.text
			case "file":
				b.Type = it.fileType()
			case "tool-media":
				b.Type = "tool_media"
			case "tool-call":
				b.Type, b.ToolUseID = "tool_use", c.chatToolID(it.toolID)
			case "reasoning":
				b.Type, b.Text = "reasoning", it.text
				reasoning = append(reasoning, b)
				joined += it.text
				continue
			default:
				continue
			}
			pm.Blocks = append(pm.Blocks, b)
		}
		if mm.role == "assistant" {
			pm.SendsReasoning = interleaved || joined != ""
		}
		if pm.SendsReasoning {
			pm.Blocks = append(reasoning, pm.Blocks...)
		} else {
			pm.Dropped = reasoning
		}
		out = append(out, pm)
	}
	return out
}

// ReasoningContent returns the reasoning_content a Chat Completions entry is
// sent with, and whether the field is sent at all.
func (pm Message) ReasoningContent() (string, bool) {
	if !pm.SendsReasoning {
		return "", false
	}
	s := ""
	for _, b := range pm.Blocks {
		if b.Type == "reasoning" {
			s += b.Text
		}
	}
	return s, true
}

// chatToolID is the tool call id OpenCode sends the model for a stored
// callID: for a model it knows as Mistral's, the id rewritten into
// Mistral's form (NormalizesCallIDs), else the id itself.
func (c *converter) chatToolID(id string) string {
	if NormalizesCallIDs(c.providerID, c.modelID) {
		return MistralCallID(id)
	}
	return id
}
