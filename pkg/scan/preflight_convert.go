package scan

import (
	"regexp"
	"slices"
	"strings"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/tidwall/gjson"
)

// The conversion runs in OpenCode's stages (read from the 1.18.33 and
// 1.1.65 binaries):
//  1. history: messages since the last completed compaction, in the order
//     OpenCode sends them (filterCompacted);
//  2. OpenCode's toModelMessages: stored messages to UI messages (what is
//     skipped, tools in every state, reasoning of another model);
//  3. the AI SDK's convertToModelMessages: each assistant step (split at
//     step-start) becomes an assistant message, followed by a tool message
//     with the results of the step's tool calls;
//  4. OpenCode's normalizeMessages for the provider (empty text and empty
//     reasoning dropped for Anthropic and Bedrock, empty messages removed);
//  5. the provider SDK: consecutive user and tool messages become one user
//     message, consecutive assistant messages one assistant message;
//     reasoning without a signature or redacted data is left out; the last
//     text of a request that ends with an assistant message is trimmed.

// historyOrder returns the stored messages OpenCode loads as history, in
// the order it sends them.
func historyOrder(msgs []*store.Message, v ConvVersion) []*store.Message {
	completed := map[string]bool{}
	var rev []*store.Message // newest first
	tail := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		rev = append(rev, m)
		if v == Conv11 {
			if m.Role == "user" && completed[m.ID] && hasPartType(m, "compaction") {
				break
			}
			if m.Role == "assistant" && m.Get("summary").Bool() && m.Get("finish").String() != "" {
				completed[m.Get("parentID").String()] = true
			}
			continue
		}
		if tail != "" {
			if m.ID == tail {
				break
			}
			continue
		}
		if m.Role == "user" && completed[m.ID] {
			comp := partOfType(m, "compaction")
			if comp == nil {
				continue
			}
			tail = comp.Get("tail_start_id").String()
			if tail == "" || tail == m.ID {
				break
			}
			continue
		}
		if m.Role == "assistant" && m.Get("summary").Bool() && m.Get("finish").String() != "" && ErrorName(m) == "" {
			completed[m.Get("parentID").String()] = true
		}
	}
	out := make([]*store.Message, len(rev))
	for i, m := range rev {
		out[len(rev)-1-i] = m
	}
	if v == Conv11 {
		return out
	}
	// A compaction that kept a tail: the compaction prompt and its summary
	// are sent before the kept tail.
	w := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == "user" && hasTailCompaction(out[i]) {
			w = i
			break
		}
	}
	if w < 0 {
		return out
	}
	tailID := partOfType(out[w], "compaction").Get("tail_start_id").String()
	j, t := -1, -1
	for i := w + 1; i < len(out); i++ {
		if out[i].Role == "assistant" && out[i].Get("summary").Bool() && out[i].Get("parentID").String() == out[w].ID {
			j = i
			break
		}
	}
	for i, m := range out {
		if tailID != "" && m.ID == tailID {
			t = i
			break
		}
	}
	if t >= 0 && t < w && j > w {
		re := append([]*store.Message{}, out[w:j+1]...)
		re = append(re, out[t:w]...)
		return append(re, out[j+1:]...)
	}
	return out
}

func hasTailCompaction(m *store.Message) bool {
	for _, p := range m.Parts {
		if p.Type == "compaction" && p.Get("tail_start_id").Exists() {
			return true
		}
	}
	return false
}

func partOfType(m *store.Message, t string) *store.Part {
	for _, p := range m.Parts {
		if p.Type == t {
			return p
		}
	}
	return nil
}

func hasPartType(m *store.Message, t string) bool { return partOfType(m, t) != nil }

// item is one piece of content on its way through the stages.
type item struct {
	kind    string // text, file, reasoning, tool-call, tool-result, step
	text    string
	mime    string
	part    *store.Part // the stored part (reasoning: where its metadata is)
	meta    bool        // the reasoning's provider metadata is sent (not another model's message)
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
	v                   ConvVersion
	kind                ProviderKind
	providerID, modelID string
	opts                RequestOptions
	// Paths of the provider metadata namespaces the SDKs read signatures
	// from, made once per request instead of once per reasoning part.
	anthropicNS, providerNS, bedrockNS metaNS
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

// BuildRequest builds the messages array OpenCode sends for the session to
// its current model (or the model in opts), with every block mapped back to
// its stored message and part.
func BuildRequest(s *store.Session, opts RequestOptions) *Request {
	c := converter{v: opts.Version, opts: opts, providerID: opts.ProviderID, modelID: opts.ModelID}
	if c.v == "" {
		c.v = RequestVersion(s)
	}
	if c.providerID == "" && c.modelID == "" {
		c.providerID, c.modelID = CurrentModel(s)
	}
	c.kind = ProviderKindOf(c.providerID, c.modelID)
	c.anthropicNS, c.providerNS, c.bedrockNS = newMetaNS("anthropic"), newMetaNS(c.providerID), newMetaNS("bedrock")
	msgs := s.Messages
	if opts.Until != "" {
		for i, m := range msgs {
			if m.ID == opts.Until {
				msgs = msgs[:i]
				break
			}
		}
	}
	var model []modelMsg
	for _, m := range historyOrder(msgs, c.v) {
		model = append(model, c.toModel(m)...)
	}
	model = c.normalize(model)
	if opts.NextPrompt {
		model = append(model, modelMsg{role: "user", content: []item{{kind: "text", text: "(next prompt)"}}})
	}
	r := &Request{
		Version: c.v, ProviderID: c.providerID, ModelID: c.modelID, Kind: c.kind,
		Thinking:   ThinkingEnabled(s, c.providerID, c.modelID),
		NextPrompt: opts.NextPrompt,
	}
	if c.kind == KindOpenAI {
		r.Messages = c.openAIMessages(model)
	} else {
		r.Messages = c.groupedMessages(model)
	}
	return r
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
				if p.Get("ignored").Bool() || (c.v == Conv118 && t == "") {
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
			if c.v == Conv118 && t == "" && signedHere {
				t = " "
			}
			add(p, item{kind: "text", text: t})
		case "step-start":
			add(p, item{kind: "step"})
		case "tool":
			st := p.Get("state.status").String()
			isErr := false
			switch st {
			case "completed":
			case "error":
				isErr = true
				if c.v == Conv118 && p.Get("state.metadata.interrupted").Type == gjson.True &&
					p.Get("state.metadata.output").Type == gjson.String {
					isErr = false
				}
			case "pending", "running":
				isErr = true
			default:
				continue
			}
			add(p, item{kind: "tool-call", toolID: p.Get("callID").String(), isError: isErr})
		case "reasoning":
			t := PartText(p)
			if different && c.v == Conv118 {
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

// signedFor reports whether reasoning carries what the provider SDK needs
// to send it: a signature or redacted data in the metadata the SDK reads.
func (c *converter) signedFor(it item) bool {
	ns, ok := c.signatureNS(it)
	if !ok {
		return false
	}
	get := it.part.Get
	if c.kind == KindBedrock {
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
	if c.kind == KindBedrock {
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
	case c.kind == KindAnthropic && c.v == Conv118:
		keep = func(it item) bool {
			switch it.kind {
			case "text":
				return it.text != ""
			case "reasoning":
				return strings.TrimSpace(it.text) != "" || c.signedFor(it)
			}
			return true
		}
	case c.kind == KindAnthropic:
		keep = func(it item) bool {
			if it.kind == "text" || it.kind == "reasoning" {
				return it.text != ""
			}
			return true
		}
	case c.kind == KindBedrock && c.v == Conv118:
		keep = func(it item) bool {
			switch it.kind {
			case "text":
				return it.text != ""
			case "reasoning":
				return c.signedFor(it)
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
	if strings.Contains(c.modelID, "claude") && !toolIDSafe(id) {
		return toolIDUnsafe.ReplaceAllString(id, "_")
	}
	return id
}

// groupedMessages is the Anthropic and Bedrock SDKs' conversion: user and
// tool messages in a row form one user message, assistant messages in a row
// one assistant message.
func (c *converter) groupedMessages(model []modelMsg) []ProviderMessage {
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
	out := make([]ProviderMessage, 0, len(groups))
	for gi, g := range groups {
		pm := ProviderMessage{Role: g.role}
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
			for k, it := range mm.content {
				b := Block{MessageID: it.msgID, PartID: it.partID}
				switch it.kind {
				case "text":
					b.Type, b.Text = "text", it.text
					if g.role == "assistant" && gi == len(groups)-1 && mi == len(g.msgs)-1 && k == len(mm.content)-1 {
						b.Text = strings.TrimSpace(b.Text)
					}
				case "file":
					b.Type = "document"
					if strings.HasPrefix(it.mime, "image/") {
						b.Type = "image"
					}
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

// openAIMessages is the Chat Completions shape: user and assistant messages
// as they are (reasoning is not sent back), one tool message per result.
func (c *converter) openAIMessages(model []modelMsg) []ProviderMessage {
	var out []ProviderMessage
	for _, mm := range model {
		var src []string
		if mm.src != "" {
			src = []string{mm.src}
		}
		if mm.role == "tool" {
			for _, it := range mm.content {
				out = append(out, ProviderMessage{Role: "tool", Sources: src, Blocks: []Block{{
					Type: "tool_result", ToolUseID: it.toolID, IsError: it.isError, MessageID: it.msgID, PartID: it.partID,
				}}})
			}
			continue
		}
		pm := ProviderMessage{Role: mm.role, Sources: src}
		for _, it := range mm.content {
			b := Block{MessageID: it.msgID, PartID: it.partID}
			switch it.kind {
			case "text":
				b.Type, b.Text = "text", it.text
			case "file":
				b.Type = "document"
			case "tool-call":
				b.Type, b.ToolUseID = "tool_use", it.toolID
			case "reasoning":
				pm.Dropped = append(pm.Dropped, Block{Type: "thinking", Text: it.text, MessageID: it.msgID, PartID: it.partID})
				continue
			default:
				continue
			}
			pm.Blocks = append(pm.Blocks, b)
		}
		out = append(out, pm)
	}
	return out
}
