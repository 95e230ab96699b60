package sent

import (
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
)

// The conversion runs in OpenCode's stages (read from the 1.18.33 and
// 1.1.65 binaries):
//  1. history: messages since the last completed compaction, in the order
//     OpenCode sends them (HistoryOrder);
//  2. OpenCode's toModelMessages: stored messages to UI messages (what is
//     skipped, tools in every state, reasoning of another model);
//  3. the AI SDK's convertToModelMessages: each assistant step (split at
//     step-start) becomes an assistant message, followed by a tool message
//     with the results of the step's tool calls;
//  4. OpenCode's normalizeMessages for the provider (empty text and empty
//     reasoning dropped for Anthropic, Bedrock and Gemini, empty messages
//     removed);
//  5. the provider package, one file per family: anthropic.go (Anthropic
//     and Bedrock), chat.go, responses.go, google.go.

// item is one piece of content on its way through the stages.
type item struct {
	kind    string // text, file, reasoning, tool-call, tool-result, tool-media, step
	text    string
	mime    string
	part    *store.Part // the stored part (reasoning and calls: where their metadata is)
	meta    bool        // the part's provider metadata is sent (not another model's message)
	toolID  string
	isError bool
	msgID   string
	partID  string
}

// modelMsg is a message after the AI SDK's conversion.
type modelMsg struct {
	role    string // user, assistant, tool
	src     string // stored message id ("" for the next prompt)
	content []item
}

type converter struct {
	v                   Version
	family              Family
	providerID, modelID string
	opts                Options
	// Paths of the provider metadata namespaces the SDKs read signatures
	// from, made once per request instead of once per reasoning part.
	anthropicNS, providerNS, bedrockNS metaNS
}

func newConverter(s *store.Session, opts Options) *converter {
	c := &converter{v: opts.Version, opts: opts, providerID: opts.ProviderID, modelID: opts.ModelID}
	if c.v == "" {
		c.v = VersionOf(s)
	}
	if c.providerID == "" && c.modelID == "" {
		c.providerID, c.modelID = CurrentModel(s)
	}
	c.family = FamilyIn(s, c.providerID, c.modelID)
	if c.v == V11 && IsCopilot(c.providerID) {
		// OpenCode 1.1.65 sends every Copilot model, Claude too, through
		// its Chat Completions package (@ai-sdk/github-copilot: the
		// signature goes back as reasoning_opaque), which sessfix does
		// not model.
		c.family = Other
	}
	c.anthropicNS, c.providerNS, c.bedrockNS = newMetaNS("anthropic"), newMetaNS(c.providerID), newMetaNS("bedrock")
	return c
}

// metaNS holds the paths of one provider namespace inside a part's
// metadata ("metadata.anthropic" and the keys in it).
type metaNS struct {
	ns, signature, redactedData, redactedContent string
}

func newMetaNS(key string) metaNS {
	ns := "metadata." + gjsonKey(key)
	return metaNS{ns: ns, signature: ns + ".signature", redactedData: ns + ".redactedData", redactedContent: ns + ".redactedContent"}
}

// toModel converts one stored message: OpenCode's toModelMessages, then the
// AI SDK's split of an assistant message at each step-start.
func (c *converter) toModel(m *store.Message) []modelMsg {
	if len(m.Parts) == 0 {
		return nil
	}
	ui := make([]item, 0, len(m.Parts))
	add := func(p *store.Part, it item) {
		it.msgID, it.partID = m.ID, p.ID
		ui = append(ui, it)
	}
	if m.Role == "user" {
		for _, p := range m.Parts {
			switch p.Type {
			case "text":
				t := PartText(p)
				if p.Get("ignored").Bool() || (c.v == V118 && t == "") {
					continue
				}
				add(p, item{kind: "text", text: t})
			case "file":
				mime := p.Get("mime").String()
				if mime != "text/plain" && mime != "application/x-directory" {
					add(p, item{kind: "file", mime: mime})
				}
			case "compaction":
				add(p, item{kind: "text", text: "What did we do so far?"})
			case "subtask":
				add(p, item{kind: "text", text: "The following tool was executed by the user"})
			}
		}
		if len(ui) == 0 {
			return nil
		}
		return []modelMsg{{role: "user", src: m.ID, content: ui}}
	}
	if m.Role != "assistant" {
		return nil
	}
	if SkippedByOpenCode(m) && !(c.opts.AsOfError && ExcludedBySessfix(m)) {
		return nil
	}
	different := c.providerID+"/"+c.modelID != m.Get("providerID").String()+"/"+m.Get("modelID").String()
	signedHere := false
	for _, p := range m.Parts {
		if HasAnthropicSignature(p) {
			signedHere = true
		}
	}
	for _, p := range m.Parts {
		switch p.Type {
		case "text":
			t := PartText(p)
			if c.v == V118 && t == "" && signedHere {
				t = " "
			}
			add(p, item{kind: "text", text: t, part: p, meta: !different})
		case "step-start":
			add(p, item{kind: "step"})
		case "tool":
			st := p.Get("state.status").String()
			isErr := false
			switch st {
			case "completed":
			case "error":
				isErr = true
				if c.v == V118 && p.Get("state.metadata.interrupted").Type == gjson.True &&
					p.Get("state.metadata.output").Type == gjson.String {
					isErr = false
				}
			case "pending", "running":
				isErr = true
			default:
				continue
			}
			add(p, item{kind: "tool-call", toolID: p.Get("callID").String(), isError: isErr, part: p, meta: !different})
		case "reasoning":
			t := PartText(p)
			if different && c.v == V118 {
				if strings.TrimSpace(t) != "" {
					add(p, item{kind: "text", text: t})
				}
				continue
			}
			add(p, item{kind: "reasoning", text: t, part: p, meta: !different})
		}
	}
	onlySteps := true
	for _, it := range ui {
		if it.kind != "step" {
			onlySteps = false
		}
	}
	if onlySteps {
		return nil
	}
	var out []modelMsg
	// Each step's items are a run of ui between step markers; the run is
	// used in place (capped, so nothing appends into the next run).
	flush := func(block []item) {
		if len(block) == 0 {
			return
		}
		out = append(out, modelMsg{role: "assistant", src: m.ID, content: block})
		var results []item
		for _, it := range block {
			if it.kind == "tool-call" {
				r := it
				r.kind = "tool-result"
				results = append(results, r)
			}
		}
		if len(results) > 0 {
			out = append(out, modelMsg{role: "tool", src: m.ID, content: results})
			if media := c.movedToolMedia(results); media != nil {
				out = append(out, modelMsg{role: "user", src: m.ID, content: media})
			}
		}
	}
	start := 0
	for i, it := range ui {
		if it.kind == "step" {
			flush(ui[start:i:i])
			start = i + 1
		}
	}
	flush(ui[start:len(ui):len(ui)])
	return out
}

// ToolMediaText opens the user message OpenCode 1.18.33 sends after a
// step's tool results, holding their media, to a provider whose package
// takes no media in tool results (OBSERVED.md).
const ToolMediaText = "Attached media from tool result:"

// movedToolMedia is the content of that user message for a step's tool
// results (nil for none): ToolMediaText, then one tool_media item for
// each media attachment (a data: URL) of a completed result not
// compacted, in order. Seen for Chat Completions (@ai-sdk/openai-compatible)
// on 1.18.33, for every model: one that takes images gets the image, one
// that does not an error text in its place (either is a tool_media block
// here: sessfix does not know the model's input types). The media stay
// counted where they are stored, in the tool result: opencode's counts
// read the tool_result blocks, not these.
func (c *converter) movedToolMedia(results []item) []item {
	if c.family != Chat || c.v != V118 {
		return nil
	}
	var out []item
	for _, r := range results {
		p := r.part
		if p == nil || p.Get("state.status").String() != "completed" || p.Get("state.time.compacted").Exists() {
			continue
		}
		for _, a := range p.Get("state.attachments").Array() {
			url := a.Get("url").String()
			if !strings.HasPrefix(url, "data:") || !strings.Contains(url, ",") {
				continue
			}
			if out == nil {
				out = append(out, item{kind: "text", text: ToolMediaText, msgID: r.msgID, partID: r.partID})
			}
			out = append(out, item{kind: "tool-media", mime: a.Get("mime").String(), part: p, msgID: r.msgID, partID: r.partID})
		}
	}
	return out
}

// signedFor reports whether reasoning carries what the Anthropic or Bedrock
// package needs to send it: a signature or redacted data in the metadata
// the package reads.
func (c *converter) signedFor(it item) bool {
	ns, ok := c.signatureNS(it)
	if !ok {
		return false
	}
	get := it.part.Get
	if c.family == Bedrock {
		return notNull(get(ns.signature)) || notNull(get(ns.redactedContent)) || notNull(get(ns.redactedData))
	}
	return notNull(get(ns.signature)) || notNull(get(ns.redactedData))
}

// signatureNS returns the metadata namespace the provider's SDK reads the
// reasoning's signature from: Bedrock's under the provider id, else
// "bedrock"; Anthropic's under "anthropic", else the provider id. ok is
// false when the metadata is not sent or has neither.
func (c *converter) signatureNS(it item) (ns metaNS, ok bool) {
	if !it.meta || it.part == nil {
		return ns, false
	}
	first, second := c.anthropicNS, c.providerNS
	if c.family == Bedrock {
		first, second = c.providerNS, c.bedrockNS
	} else if c.providerID == "" {
		second = first
	}
	if it.part.Get(first.ns).Exists() {
		return first, true
	}
	if it.part.Get(second.ns).Exists() {
		return second, true
	}
	return ns, false
}

func notNull(r gjson.Result) bool { return r.Exists() && r.Type != gjson.Null }

var gjsonSpecial = strings.NewReplacer(".", `\.`, "*", `\*`, "?", `\?`, "|", `\|`, "#", `\#`, "@", `\@`)

func gjsonKey(k string) string { return gjsonSpecial.Replace(k) }

// normalize is OpenCode's normalizeMessages for the provider: empty text
// (and, depending on the version, reasoning OpenCode knows the SDK cannot
// send) is removed, and messages left empty are removed.
func (c *converter) normalize(in []modelMsg) []modelMsg {
	var keep func(it item) bool
	switch {
	case c.family == Anthropic && c.v == V118:
		keep = func(it item) bool {
			switch it.kind {
			case "text":
				return it.text != ""
			case "reasoning":
				return strings.TrimSpace(it.text) != "" || c.signedFor(it)
			}
			return true
		}
	case c.family == Anthropic:
		keep = func(it item) bool {
			if it.kind == "text" || it.kind == "reasoning" {
				return it.text != ""
			}
			return true
		}
	case c.family == Bedrock && c.v == V118:
		keep = func(it item) bool {
			switch it.kind {
			case "text":
				return it.text != ""
			case "reasoning":
				return c.signedFor(it)
			}
			return true
		}
	case c.family == Google:
		keep = func(it item) bool {
			if it.kind == "text" || it.kind == "reasoning" {
				return it.text != ""
			}
			return true
		}
	default:
		return in
	}
	out := make([]modelMsg, 0, len(in))
	for _, mm := range in {
		// Most messages keep every item: copy only from the first dropped one.
		k := 0
		for k < len(mm.content) && keep(mm.content[k]) {
			k++
		}
		if k < len(mm.content) {
			content := make([]item, k, len(mm.content)-1)
			copy(content, mm.content[:k])
			for _, it := range mm.content[k+1:] {
				if keep(it) {
					content = append(content, it)
				}
			}
			mm.content = content
		}
		if len(mm.content) == 0 {
			continue
		}
		out = append(out, mm)
	}
	return out
}

// srcOf is the Sources of an entry built from one model message.
func srcOf(mm modelMsg) []string {
	if mm.src == "" {
		return nil
	}
	return []string{mm.src}
}

// block starts a Block that maps back to the item's stored part.
func (it item) block(typ string) Block {
	return Block{Type: typ, MessageID: it.msgID, PartID: it.partID}
}

// fileType is the block type a file part is sent as: an image or a
// document.
func (it item) fileType() string {
	if strings.HasPrefix(it.mime, "image/") {
		return "image"
	}
	return "document"
}
