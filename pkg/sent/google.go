package sent

// geminiContents is @ai-sdk/google's contents (the system prompt goes in
// systemInstruction, outside them): a user content per user message, a
// model content per assistant step (reasoning as a thought part, text,
// calls with the thoughtSignature stored in metadata.google; another
// model's calls go unsigned), and a user content with the step's
// functionResponse parts after it. Contents are not merged.
func (c *converter) geminiContents(model []modelMsg) []Message {
	out := make([]Message, 0, len(model))
	for _, mm := range model {
		role := mm.role
		switch role {
		case "assistant":
			role = "model"
		case "tool":
			role = "user"
		}
		pm := Message{Role: role, Sources: srcOf(mm)}
		for _, it := range mm.content {
			b := it.block("")
			switch it.kind {
			case "text":
				b.Type, b.Text = "text", it.text
			case "file":
				b.Type = it.fileType()
			case "reasoning":
				b.Type, b.Text = "thought", it.text
			case "tool-call":
				b.Type, b.ToolUseID = "tool_use", it.toolID
				if it.meta && it.part != nil {
					b.Signature = it.part.Get("metadata.google.thoughtSignature").String()
				}
			case "tool-result":
				b.Type, b.ToolUseID, b.IsError = "tool_result", it.toolID, it.isError
			default:
				continue
			}
			pm.Blocks = append(pm.Blocks, b)
		}
		out = append(out, pm)
	}
	return out
}
