package opencode

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// This file is error-driven recovery's reading of a provider error against
// the stored session: which message it points at, what it says is wrong
// there, and whether that is still so. scan's rule on a stored failed
// attempt, `sessfix diagnose` and pkg/fix's error-driven repairs all decide
// through it (and through scan.Resolved), so scan and fix never disagree
// about a stored error.

// Defect is what a provider error says is wrong with the message it points
// at, finer than ErrorType where the repair differs.
type Defect int

// Defects.
const (
	DefectNone          Defect = iota
	DefectOrderFinal           // the final tool-loop message must start with (signed) thinking
	DefectOrderFirst           // a message with thinking must start with it
	DefectFinalThinking        // the last block of a message cannot be thinking
	DefectDisabled             // thinking disabled: no thinking allowed
	DefectToolMissing          // tool_use without tool_result
	DefectEmpty                // empty content or blank text
	DefectSignature            // invalid or missing signature

	// The defects below are what a record holds (a part's metadata, a
	// turn's missing reasoning), so a message no longer showing one is
	// proof enough that it was repaired. Those marked "session-wide" are
	// on every message before the failed attempt that shows them, not only
	// on the one the error names: the provider names the first it meets.

	DefectReasoningMissing // session-wide: a tool-call turn OpenCode sends without reasoning_content
	DefectNoFollowing      // a reasoning part with encrypted content and nothing after it in its turn
	DefectUnverified       // session-wide: reasoning with encrypted content the API cannot verify
	DefectItemIDs          // session-wide: parts with provider item ids the API does not hold
	DefectThoughtSignature // session-wide: function calls with a Gemini thought signature it refuses
	// DefectBedrockSignature is an invalid_signature error from Bedrock:
	// signed reasoning issued to another account (session-wide).
	DefectBedrockSignature
	// DefectToolInputCut is a tool_input_truncated error: calls the output
	// limit cut off, or whose input is not a JSON object (session-wide).
	DefectToolInputCut
	// DefectForeignCallIDs is a tool_call_id_invalid error: tool calls
	// whose ids are not of Mistral's form (session-wide).
	DefectForeignCallIDs
	// DefectToolUseIDs is a tool_use_id_invalid error: tool calls whose
	// ids the Messages API refuses, empty or shared with another call
	// (session-wide).
	DefectToolUseIDs
	// DefectCopilotSignature is an invalid_signature error from GitHub
	// Copilot: signed thinking that Copilot's upstream for the model cannot
	// verify (another account's, another deployment's). Copilot names the
	// first block it refuses; the messages before it passed, the ones after
	// it are as foreign, so it is repaired on the named message and every
	// later one before the failed attempt that still sends a signature.
	DefectCopilotSignature
)

// DefectOf classifies a provider error of type t (DetectErrorType(text)) by
// what it says is wrong with its message.
func DefectOf(t ErrorType, text string) Defect {
	l := strings.ToLower(text)
	switch t {
	case ErrorThinkingBlockOrder:
		switch {
		case strings.Contains(l, "final block") || strings.Contains(l, "cannot be thinking") || strings.Contains(l, "cannot be `thinking`"):
			return DefectFinalThinking
		case strings.Contains(l, "first block"):
			return DefectOrderFirst
		}
		return DefectOrderFinal
	case ErrorThinkingDisabledViolation:
		return DefectDisabled
	case ErrorToolResultMissing:
		return DefectToolMissing
	case ErrorEmptyContent:
		return DefectEmpty
	case ErrorInvalidSignature:
		return DefectSignature
	case ErrorReasoningContentMissing:
		return DefectReasoningMissing
	case ErrorReasoningWithoutFollowing:
		return DefectNoFollowing
	case ErrorEncryptedContentInvalid:
		return DefectUnverified
	case ErrorItemNotPersisted:
		return DefectItemIDs
	case ErrorThoughtSignatureCorrupted:
		return DefectThoughtSignature
	case ErrorToolInputTruncated:
		return DefectToolInputCut
	case ErrorToolCallIDInvalid:
		return DefectForeignCallIDs
	case ErrorToolUseIDInvalid:
		return DefectToolUseIDs
	}
	return DefectNone
}

// SessionWide reports a defect whose repair covers every message before
// the failed attempt that shows it (ShowsBefore), not only the named one.
func (d Defect) SessionWide() bool {
	switch d {
	case DefectReasoningMissing, DefectUnverified, DefectItemIDs, DefectThoughtSignature, DefectBedrockSignature,
		DefectToolInputCut, DefectForeignCallIDs, DefectToolUseIDs, DefectCopilotSignature:
		return true
	}
	return false
}

// InRecords reports a defect a message's own records hold (metadata, a
// missing part): once a message no longer shows it, it was repaired.
func (d Defect) InRecords() bool {
	return d >= DefectReasoningMissing
}

// ShowsBefore returns the messages before the stored message until (every
// message when until is "") that show the defect, in order.
func (d Defect) ShowsBefore(s *store.Session, until string) []*store.Message {
	var out []*store.Message
	f := &sessionFacts{s: s}
	for _, m := range s.Messages {
		if until != "" && m.ID == until {
			break
		}
		if d.shows(f, m) {
			out = append(out, m)
		}
	}
	return out
}

// ShowsFrom is ShowsBefore for a defect repaired from the message the
// error names on (DefectCopilotSignature): the messages before from are
// left out. For every other defect, and when from is "" or not in the
// session, it is ShowsBefore.
func (d Defect) ShowsFrom(s *store.Session, from, until string) []*store.Message {
	if d != DefectCopilotSignature || from == "" || s.Message(from) == nil {
		return d.ShowsBefore(s, until)
	}
	var out []*store.Message
	f := &sessionFacts{s: s}
	seen := false
	for _, m := range s.Messages {
		if until != "" && m.ID == until {
			break
		}
		seen = seen || m.ID == from
		if seen && d.shows(f, m) {
			out = append(out, m)
		}
	}
	return out
}

// Showing returns the messages before until that show the error's
// session-wide defect (ShowsFrom the message it names).
func (r *Recovery) Showing(s *store.Session, until string) []*store.Message {
	return r.Defect.ShowsFrom(s, r.TargetID, until)
}

// ProviderMeta returns the value of key in any provider namespace of a
// part's metadata (metadata.openai.itemId, metadata.azure.itemId, …), the
// first namespace that has it, and whether one does.
func ProviderMeta(p *store.Part, key string) (ns string, val gjson.Result, ok bool) {
	p.Get("metadata").ForEach(func(k, v gjson.Result) bool {
		if r := v.Get(gjson.Escape(key)); v.IsObject() && r.Exists() {
			ns, val, ok = k.String(), r, true
			return false
		}
		return true
	})
	return ns, val, ok
}

// HasEncryptedReasoning reports a reasoning part OpenCode replays with
// encrypted content (metadata.<provider>.reasoningEncryptedContent set).
func HasEncryptedReasoning(p *store.Part) bool {
	if p.Type != "reasoning" {
		return false
	}
	_, v, ok := ProviderMeta(p, "reasoningEncryptedContent")
	return ok && v.Type == gjson.String && v.Str != ""
}

// HasItemID reports a part that keeps a provider item id
// (metadata.<provider>.itemId: rs_…, msg_…, fc_…).
func HasItemID(p *store.Part) bool {
	_, _, ok := ProviderMeta(p, "itemId")
	return ok
}

// GeminiSkipSignature is the placeholder Google documents for function
// calls without a thought signature; the API does not verify it.
const GeminiSkipSignature = "skip_thought_signature_validator"

// HasThoughtSignature reports a tool part with a Gemini thought signature
// (metadata.google.thoughtSignature, or under vertex) other than Google's
// placeholder.
func HasThoughtSignature(p *store.Part) bool {
	if p.Type != "tool" {
		return false
	}
	_, v, ok := ProviderMeta(p, "thoughtSignature")
	return ok && v.String() != "" && v.String() != GeminiSkipSignature
}

// sentWithoutReasoning reports an assistant message with a tool-call step
// OpenCode sends without reasoning_content: the step has no reasoning part
// with text, or the message is another model's (its reasoning goes as
// text).
func sentWithoutReasoning(s *store.Session, m *store.Message) bool {
	pid, mid := sent.CurrentModel(s)
	other := m.Get("providerID").String() != pid || m.Get("modelID").String() != mid
	for _, st := range StepRanges(m) {
		tools, reasoning := false, false
		for _, p := range m.Parts[st[0]:st[1]] {
			tools = tools || p.Type == "tool"
			reasoning = reasoning || (p.Type == "reasoning" && strings.TrimSpace(PartText(p)) != "")
		}
		if tools && (other || !reasoning) {
			return true
		}
	}
	return false
}

// thinkingDefect reports the defects a repair can clear by removing the
// message's thinking.
func (d Defect) ThinkingDefect() bool {
	switch d {
	case DefectOrderFinal, DefectOrderFirst, DefectFinalThinking, DefectDisabled, DefectSignature:
		return true
	}
	return false
}

// Shows reports whether the stored message still shows the defect, as far
// as its records tell (a corrupted signature looks like any other: a message
// that owns signed thinking shows DefectSignature). A message OpenCode no
// longer sends shows none.
func (d Defect) Shows(s *store.Session, m *store.Message) bool {
	return d.shows(&sessionFacts{s: s}, m)
}

// sessionFacts holds what Shows reads from the whole session, computed
// once for every message a loop asks about (ShowsBefore, ShowsFrom), not
// once per message.
type sessionFacts struct {
	s   *store.Session
	bad map[string]bool // BadToolUseIDs, nil until asked
}

func (f *sessionFacts) badToolUseIDs() map[string]bool {
	if f.bad == nil {
		f.bad = BadToolUseIDs(f.s)
	}
	return f.bad
}

func (d Defect) shows(f *sessionFacts, m *store.Message) bool {
	s := f.s
	if m == nil || SkippedByOpenCode(m) {
		return false
	}
	needsSig := NeedsSignature(m.Get("providerID").String(), m.Get("modelID").String())
	sent := func(p *store.Part) bool {
		if IsMetaPart(p) {
			return false
		}
		if IsThinkingPart(p) {
			return !needsSig || IsSigned(p)
		}
		return !(p.Type == "text" && PartText(p) == "")
	}
	switch d {
	case DefectOrderFinal, DefectOrderFirst, DefectFinalThinking:
		for _, st := range StepRanges(m) {
			var first, last *store.Part
			thinking, tools := false, false
			for _, p := range m.Parts[st[0]:st[1]] {
				if !sent(p) {
					continue
				}
				if first == nil {
					first = p
				}
				last = p
				thinking = thinking || IsThinkingPart(p)
				tools = tools || p.Type == "tool"
			}
			switch {
			case d == DefectOrderFinal && tools && !IsThinkingPart(first):
				return true
			case d == DefectOrderFirst && thinking && !IsThinkingPart(first):
				return true
			case d == DefectFinalThinking && last != nil && IsThinkingPart(last):
				return true
			}
		}
		return false
	case DefectDisabled:
		return len(ThinkingParts(m)) > 0
	case DefectToolMissing:
		for _, p := range m.Parts {
			if UnfinishedTool(p) {
				return true
			}
		}
		return false
	case DefectEmpty:
		if !HasContent(m) {
			return true
		}
		for _, p := range m.Parts {
			if IsBlankText(p) {
				return true
			}
		}
		return false
	case DefectSignature:
		return OwnsSignedThinking(m)
	case DefectReasoningMissing:
		return m.Role == "assistant" && sentWithoutReasoning(s, m)
	case DefectNoFollowing, DefectUnverified:
		return anyPart(m, HasEncryptedReasoning)
	case DefectItemIDs:
		return anyPart(m, HasItemID)
	case DefectThoughtSignature:
		return anyPart(m, HasThoughtSignature)
	case DefectBedrockSignature:
		return anyPart(m, HasBedrockSignature)
	case DefectCopilotSignature:
		return OwnsSignedThinking(m) || anyPart(m, HasCopilotOpaque)
	case DefectToolInputCut:
		return m.Role == "assistant" && len(CutToolInputs(m)) > 0
	case DefectForeignCallIDs:
		return anyPart(m, ForeignCallID)
	case DefectToolUseIDs:
		bad := f.badToolUseIDs()
		return anyPart(m, func(p *store.Part) bool { return bad[p.ID] })
	}
	return false
}

// HasBedrockSignature reports a reasoning part OpenCode replays to Bedrock
// with its signature (metadata.bedrock.signature).
func HasBedrockSignature(p *store.Part) bool {
	return p.Type == "reasoning" && p.Get("metadata.bedrock.signature").String() != ""
}

// HasCopilotOpaque reports a part that keeps the signature GitHub Copilot's
// Chat Completions API returns for Claude's thinking
// (metadata.copilot.reasoningOpaque): OpenCode sends it back as the
// message's reasoning_opaque, the thinking block's signature upstream.
func HasCopilotOpaque(p *store.Part) bool {
	return p.Get("metadata.copilot.reasoningOpaque").String() != ""
}

func anyPart(m *store.Message, f func(*store.Part) bool) bool {
	for _, p := range m.Parts {
		if f(p) {
			return true
		}
	}
	return false
}

// StepRanges splits a message's parts at step-start into [start, end)
// ranges: OpenCode sends each step as its own assistant message.
func StepRanges(m *store.Message) [][2]int {
	var out [][2]int
	start := 0
	for i, p := range m.Parts {
		if p.Type == "step-start" && i > start {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	if start < len(m.Parts) {
		out = append(out, [2]int{start, len(m.Parts)})
	}
	return out
}

// UnfinishedTool reports a tool part left pending or running.
func UnfinishedTool(p *store.Part) bool {
	if p.Type != "tool" {
		return false
	}
	switch p.Get("state.status").String() {
	case "pending", "running":
		return true
	}
	return false
}

// Recovery is a provider error read against a stored session: its class,
// the index or item id it names, the failed attempt that stored it and the
// stored message the index or id maps to.
type Recovery struct {
	Text   string
	Type   ErrorType
	Defect Defect
	// Index is the first index the text names, in ExtractIndex's spelling
	// ("" for none).
	Index string
	// ItemID is the first provider item or call id the text names
	// (ExtractItemID; "" for none). It maps to a part by the id stored in
	// it, never by position.
	ItemID string
	// Failed is the stored assistant message whose error the text is (the
	// failed attempt); nil for a pasted error the session does not store.
	Failed *store.Message
	// TargetID and PartID are the stored message and part the index or id
	// maps to, both "" when the text names neither or it does not map
	// (MapErr says why).
	TargetID, PartID string
	MapErr           error
}

// Names reports whether the error names a place: an index or an item id.
func (r *Recovery) Names() bool { return r.Index != "" || r.ItemID != "" }

// Where is the index or item id the error names ("" for none), for text.
func (r *Recovery) Where() string {
	if r.ItemID != "" && !IsMessagesIndex(r.Index) {
		return r.ItemID
	}
	return r.Index
}

// ReadError reads a provider error against the session. failed is the
// stored failed attempt that carries it, or nil: the index is then read
// against the history and the user's next prompt, as a resume sends them.
// The history is rebuilt as it was when the error happened: nothing from
// the failed attempt on, and turns sessfix excluded since still counted.
//
// An item id (rs_…, fc_…, msg_…, call_…) maps by the id a part stores
// (LocateItem); an index, in any family's form, through the request
// OpenCode sent that family (sent.Build, LocateIndex).
func ReadError(s *store.Session, text string, failed *store.Message) *Recovery {
	name := ""
	if failed != nil {
		name = ErrorName(failed)
	}
	t := ErrorTypeNamed(text, name)
	r := &Recovery{Text: text, Type: t, Defect: DefectOf(t, text), Index: ExtractIndex(text),
		ItemID: ExtractItemID(text), Failed: failed}
	if r.Defect == DefectSignature && familyOfError(s, failed) == sent.Bedrock {
		// Bedrock refuses reasoning signed for another account (an
		// account or region switch): every signature of the session is
		// then refused, not only the one it names.
		r.Defect = DefectBedrockSignature
	}
	if r.Defect == DefectSignature && sent.IsCopilot(providerOfError(s, failed)) {
		r.Defect = DefectCopilotSignature
	}
	switch {
	case r.ItemID != "" && !IsMessagesIndex(r.Index):
		r.TargetID, r.PartID, r.MapErr = LocateItem(s, r.ItemID, failed)
	case r.Index != "":
		r.TargetID, r.PartID, r.MapErr = r.Request(s).LocateIndex(r.Index)
	}
	return r
}

// providerOfError is the provider id the error came from: the failed
// attempt's, else the session's current one.
func providerOfError(s *store.Session, failed *store.Message) string {
	if failed != nil {
		if p := failed.Get("providerID").String(); p != "" {
			return p
		}
	}
	p, _ := sent.CurrentModel(s)
	return p
}

// familyOfError is the provider family the error came from: the failed
// attempt's model, else the session's current one.
func familyOfError(s *store.Session, failed *store.Message) sent.Family {
	if failed != nil {
		if p := failed.Get("providerID").String(); p != "" {
			return sent.FamilyIn(s, p, failed.Get("modelID").String())
		}
	}
	p, m := sent.CurrentModel(s)
	return sent.FamilyIn(s, p, m)
}

// DefaultFix is the repair error-driven recovery applies for the error, in
// rules.md notation: its type's (ErrorType.DefaultFix), but where the
// defect's repair differs from the type's usual one.
func (r *Recovery) DefaultFix() string {
	switch r.Defect {
	case DefectFinalThinking:
		return "injectTextPart|excludeMessage"
	case DefectOrderFinal:
		return "moveThinkingFirst|excludeMessage"
	}
	return r.Type.DefaultFix()
}

// LocateItem maps a provider item or call id to the stored part that holds
// it: a part whose metadata keeps it as its item id (metadata.openai.itemId
// and other providers' namespaces; rs_ is a reasoning part, msg_ a text
// part, fc_ a tool part), or a tool part whose callID it is. The API reads
// a reasoning item's id out of its encrypted content, so rs_ ids map even
// when OpenCode sent the item without id. Messages from the failed attempt
// on are not searched.
func LocateItem(s *store.Session, id string, failed *store.Message) (msgID, partID string, err error) {
	for _, m := range s.Messages {
		if failed != nil && m.ID == failed.ID {
			break
		}
		for _, p := range m.Parts {
			_, v, ok := ProviderMeta(p, "itemId")
			if (ok && v.String() == id) || (p.Type == "tool" && p.Get("callID").String() == id) {
				return m.ID, p.ID, nil
			}
		}
	}
	return "", "", fmt.Errorf("no stored part holds %s (as its item id or call id)", id)
}

// Request rebuilds the request the error answered, from the records as they
// are now.
func (r *Recovery) Request(s *store.Session) *sent.Request {
	ro := sent.Options{AsOfError: true}
	if r.Failed != nil {
		ro.Until = r.Failed.ID
	} else {
		ro.NextPrompt = true
	}
	return sent.Build(s, ro)
}

// What says what a message showing a record defect holds.
func (d Defect) What() string {
	switch d {
	case DefectReasoningMissing:
		return "a tool-call turn sent without reasoning_content"
	case DefectNoFollowing, DefectUnverified:
		return "reasoning with encrypted content"
	case DefectItemIDs:
		return "parts with provider item ids"
	case DefectThoughtSignature:
		return "function calls with a thought signature"
	case DefectBedrockSignature:
		return "reasoning with a bedrock signature"
	case DefectToolInputCut:
		return "tool calls the output limit cut off"
	case DefectForeignCallIDs:
		return "tool calls whose ids are not nine letters or digits"
	case DefectToolUseIDs:
		return "tool calls whose ids are empty or shared with an earlier call"
	case DefectCopilotSignature:
		return "signed thinking copilot cannot verify"
	}
	return ""
}

// GoneWhy says why a defect the records hold is gone.
func (d Defect) GoneWhy() string {
	switch d {
	case DefectReasoningMissing:
		return "every tool-call turn opencode sends now has its reasoning or is excluded"
	case DefectNoFollowing:
		return "that message's reasoning no longer carries encrypted content"
	case DefectUnverified:
		return "no reasoning part carries encrypted content any more"
	case DefectItemIDs:
		return "no part carries a provider item id any more"
	case DefectThoughtSignature:
		return "no function call carries a thought signature any more"
	case DefectBedrockSignature:
		return "no reasoning part carries a bedrock signature any more"
	case DefectToolInputCut:
		return "every tool call the output limit cut off is marked failed with a json object input"
	case DefectForeignCallIDs:
		return "every tool call id is nine letters or digits"
	case DefectToolUseIDs:
		return "every tool call id is letters, digits, _ and -, and no two calls share one"
	case DefectCopilotSignature:
		return "no message from the one copilot refused on sends a signature any more"
	}
	return "the session no longer shows the problem"
}

// Changed names what in the message's records shows a change made after
// the failed attempt ("" for none); synthetic says whether a synthetic part
// counts. An image sessfix re-encoded since (MarkShrunk) counts: the
// re-encode sets no time.
func (r *Recovery) Changed(m *store.Message, synthetic bool) string {
	after := r.Failed.Get("time.completed").Int()
	if after <= 0 {
		after = r.Failed.Created
	}
	for _, k := range []string{"time.created", "time.completed"} {
		if m.Get(k).Int() > after {
			return "its " + k + " is later than the attempt"
		}
	}
	for _, p := range m.Parts {
		if synthetic && IsSynthetic(p) {
			return "a synthetic " + p.Type + " part"
		}
		for _, k := range []string{"time.start", "time.end", "state.time.start", "state.time.end"} {
			if p.Get(k).Int() > after {
				return "a " + p.Type + " part whose " + k + " is later than the attempt"
			}
		}
		if ShrunkAfter(p, after) {
			return "a " + p.Type + " part with an image sessfix shrank after the attempt"
		}
	}
	return ""
}

// foundRe matches what a block-order error says it found: "but found
// `tool_use`", "Found `text`.", or without backticks "Found text." (not
// "were found without", "found in").
var foundRe = regexp.MustCompile("(?i)\\bfound (?:`([a-z_]+)`|([a-z_]+)[.,])")

// FoundType is the block type a provider error says it found at its index
// ("but found `tool_use`" → "tool_use"), or "".
func FoundType(text string) string {
	if m := foundRe.FindStringSubmatch(text); m != nil {
		return strings.ToLower(m[1] + m[2])
	}
	return ""
}
