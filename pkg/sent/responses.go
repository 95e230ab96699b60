package sent

import "strings"

// responsesItems is @ai-sdk/openai's Responses input as OpenCode 1.18.33
// sends it with the default store: false: the developer message first,
// then one item per user message, per assistant text (a message item), per
// reasoning part that has encrypted content (a reasoning item, sent without
// id: OpenCode deletes item ids unless the model's store option is on), per
// call (function_call) and per result (function_call_output). Reasoning
// without encrypted content is left out. Another model's turns come without
// metadata: their reasoning is text already (toModel), so none of it goes
// as a reasoning item.
func (c *converter) responsesItems(model []modelMsg) []Message {
	out := []Message{{Role: "developer"}}
	for _, mm := range model {
		src := srcOf(mm)
		switch mm.role {
		case "user":
			pm := Message{Role: "user", Sources: src}
			for _, it := range mm.content {
				b := it.block("text")
				b.Text = it.text
				if it.kind == "file" {
					b.Type = "document"
					if strings.HasPrefix(it.mime, "image/") {
						b.Type = "image"
					}
				}
				pm.Blocks = append(pm.Blocks, b)
			}
			out = append(out, pm)
		case "tool":
			for _, it := range mm.content {
				b := it.block("tool_result")
				b.ToolUseID, b.IsError, b.ItemID = it.toolID, it.isError, itemID(it)
				out = append(out, Message{Role: "function_call_output", Sources: src, Blocks: []Block{b}})
			}
		case "assistant":
			// Reasoning left out is kept with the next item of the step
			// (else the entry before it).
			var dropped []Block
			for _, it := range mm.content {
				b := it.block("")
				b.ItemID = itemID(it)
				role := ""
				switch it.kind {
				case "text":
					role, b.Type, b.Text = "assistant", "text", it.text
				case "tool-call":
					role, b.Type, b.ToolUseID = "function_call", "tool_use", it.toolID
				case "reasoning":
					b.Type, b.Text = "reasoning", it.text
					enc := ""
					if it.meta && it.part != nil {
						if v := it.part.Get("metadata.openai.reasoningEncryptedContent"); notNull(v) {
							enc = v.String()
						}
					}
					if enc == "" {
						dropped = append(dropped, b)
						continue
					}
					role, b.Signature = "reasoning", enc
				default:
					continue
				}
				out = append(out, Message{Role: role, Sources: src, Blocks: []Block{b}, Dropped: dropped})
				dropped = nil
			}
			if n := len(out) - 1; len(dropped) > 0 {
				out[n].Dropped = append(out[n].Dropped, dropped...)
			}
		}
	}
	return out
}

// itemID is the part's stored metadata.openai.itemId ("" for another
// model's part, whose metadata OpenCode does not send).
func itemID(it item) string {
	if it.part == nil {
		return ""
	}
	return it.part.Get("metadata.openai.itemId").String()
}
