package opencode

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// The context window: what a model takes in one request, where sessfix
// learns it, and how big the request a resume sends is.

// ClearedToolOutput is what OpenCode 1.18.33 sends instead of the output
// of a tool part whose state.time.compacted is set (its prune), without
// the part's attachments.
const ClearedToolOutput = "[Old tool result content cleared]"

// OutputTokenMax is OpenCode 1.18.33's OUTPUT_TOKEN_MAX: the most output
// tokens it asks for, and the answer's reserve in its overflow check
// (min(limit.output, 32000), 32000 when the model has no output limit).
const OutputTokenMax = 32000

// ImageTokens is what sessfix counts for one image a request sends:
// Anthropic's cost of an image at the largest size it keeps (about
// 1.15 megapixels, width × height / 750), whatever the image's bytes.
const ImageTokens = 1600

// ContextWindow is a model's context window as sessfix knows it.
type ContextWindow struct {
	// Context is the window in tokens; Input and Output are the model's
	// input and output limits (0: not known).
	Context, Input, Output int
	// Source says where Context comes from.
	Source string
	// Provider is set when Context is the provider's own number, from an
	// error it answered ("prompt is too long: N tokens > M maximum").
	Provider bool
	// LowerBound is set when Context is only the largest prompt the
	// provider accepted in the session: the window is at least that.
	LowerBound bool
}

// Reserve is the answer's share of the window OpenCode 1.18.33 keeps
// free: min(limit.output, OUTPUT_TOKEN_MAX), OUTPUT_TOKEN_MAX when the
// output limit is unknown, but never more than a quarter of a window
// whose output limit sessfix does not know.
func (w ContextWindow) Reserve() int {
	if w.Output > 0 {
		return min(w.Output, OutputTokenMax)
	}
	return min(OutputTokenMax, w.Context/4)
}

// Usable is the history OpenCode 1.18.33 lets a request hold before it
// compacts the session (its SessionCompaction.isOverflow): limit.input
// less min(20000, the reserve) when the model has an input limit, else
// the window less the reserve.
func (w ContextWindow) Usable() int {
	if w.Input > 0 {
		return max(0, w.Input-min(20000, w.Reserve()))
	}
	return max(0, w.Context-w.Reserve())
}

// Target is the size sessfix's repair brings a request under: 90% of
// Usable, a margin of a tenth for what sessfix's estimate cannot see (the
// next prompt, a system prompt that grew).
func (w ContextWindow) Target() int { return w.Usable() * 9 / 10 }

var (
	// Anthropic: "prompt is too long: 212345 tokens > 200000 maximum".
	tooLongRe = regexp.MustCompile(`prompt is too long: (\d+) tokens > (\d+) maximum`)
	// Anthropic: "input length and `max_tokens` exceed context limit:
	// 187000 + 32000 > 200000".
	inputMaxRe = regexp.MustCompile(`exceed context limit: (\d+) \+ (\d+) > (\d+)`)
	// OpenAI (context_length_exceeded): "This model's maximum context
	// length is 128000 tokens. However, your messages resulted in 130512
	// tokens."
	openAIMaxRe = regexp.MustCompile(`maximum context length is (\d+) tokens`)
	// Gemini (INVALID_ARGUMENT): "The input token count (132478) exceeds
	// the maximum number of tokens allowed (131072)."
	geminiMaxRe = regexp.MustCompile(`input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)`)
)

// ContextLimitInError reads the provider's window from a context-window
// error: M of "prompt is too long: N tokens > M maximum", of
// "exceed context limit: N + K > M", OpenAI's "maximum context length
// is M tokens" or Gemini's "The input token count (N) exceeds the maximum
// number of tokens allowed (M)"; ok is false for any other text (the
// Responses API's "Your input exceeds the context window of this model"
// does not print the window).
func ContextLimitInError(text string) (limit int, ok bool) {
	var s string
	if m := tooLongRe.FindStringSubmatch(text); m != nil {
		s = m[2]
	} else if m := inputMaxRe.FindStringSubmatch(text); m != nil {
		s = m[3]
	} else if m := openAIMaxRe.FindStringSubmatch(text); m != nil {
		s = m[1]
	} else if m := geminiMaxRe.FindStringSubmatch(text); m != nil {
		s = m[2]
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0
}

// StoredContextLimit is the window the provider printed in the newest
// context-window error the session stores for its current model, if any
// (a compaction may run on another model: its errors print that model's
// window).
func StoredContextLimit(s *store.Session) (int, bool) {
	provider, model := sent.CurrentModel(s)
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || m.Get("providerID").String() != provider || m.Get("modelID").String() != model {
			continue
		}
		if n, ok := ContextLimitInError(m.Get("error.data.message").String()); ok {
			return n, true
		}
	}
	return 0, false
}

// StoredOverflow reports whether the session's newest error is a context
// overflow: a provider's text that says so, or OpenCode's
// ContextOverflowError with a text of no other type (1.18.33 stores an
// HTTP 413, a request over a size limit, as a ContextOverflowError too:
// OBSERVED.md).
func StoredOverflow(s *store.Session) bool {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role != "assistant" || sent.ExcludedBySessfix(m) {
			continue
		}
		if ErrorName(m) == "" {
			return false
		}
		return StoredErrorType(m) == ErrorContextOverflow
	}
	return false
}

// LargestAcceptedPrompt is the largest prompt the provider took in this
// session, in its own tokens (an assistant message's tokens.input +
// cache.read + cache.write): the window is at least that.
func LargestAcceptedPrompt(s *store.Session) int {
	best := 0
	for _, m := range s.Messages {
		if m.Role == "assistant" {
			best = max(best, promptTokens(m))
		}
	}
	return best
}

func promptTokens(m *store.Message) int {
	return int(m.Get("tokens.input").Int() + m.Get("tokens.cache.read").Int() + m.Get("tokens.cache.write").Int())
}

// WindowOf is the context window of the session's current model: the
// provider's own number when the session stores an error that prints it;
// else the limit OpenCode's model data gives (your config, then the
// models catalogue OpenCode caches), with the output limit from there in
// either case. The window is at least the largest prompt the provider
// accepted in the session: that is taken instead of model data that says
// less, and, when nothing else says and the session's newest error is a
// context overflow, as the window (both LowerBound). ok is false when
// nothing tells.
func WindowOf(s *store.Session, oc *ocenv.Resolver) (ContextWindow, bool) {
	var w ContextWindow
	if oc != nil && s.Info != nil {
		if ms, err := oc.Models(s.Info.Get("directory").Str); err == nil {
			p, m := sent.CurrentModel(s)
			if l, src, ok := ms.Limit(p, m); ok {
				w = ContextWindow{Context: l.Context, Input: l.Input, Output: l.Output, Source: src}
			}
		}
	}
	if n, ok := StoredContextLimit(s); ok {
		w.Context, w.Provider, w.Source = n, true, "the provider's error"
		w.Input = 0
	}
	if w.Context > 0 && !w.Provider {
		// The provider took a longer prompt than the model data says it
		// can (a window the catalogue does not know, such as a beta's):
		// the window is at least that.
		if n := LargestAcceptedPrompt(s); n > w.Context {
			w.Source = fmt.Sprintf("the largest prompt the provider accepted in this session (%d tokens), more than %s gives", n, w.Source)
			w.Context, w.Input, w.LowerBound = n, 0, true
		}
	}
	if w.Context == 0 && StoredOverflow(s) {
		if n := LargestAcceptedPrompt(s); n > 0 {
			w.Context, w.LowerBound = n, true
			w.Source = fmt.Sprintf("the largest prompt the provider accepted in this session (%d tokens)", n)
		}
	}
	return w, w.Context > 0
}

// ContextEstimate is sessfix's estimate of the tokens a request holds.
type ContextEstimate struct {
	// Tokens is the conservative estimate (text at 3 bytes a token);
	// Low the lenient one (4 bytes a token), which the request is
	// almost surely over.
	Tokens, Low int
	// Measured is the part the provider counted itself: the stored usage
	// of the newest assistant message the request re-sends (0: none).
	Measured int
	// Base is that message's id ("" when no message stores usage).
	Base string
}

// blockOverhead is what sessfix adds for each block: its JSON keys, type
// and ids.
const blockOverhead = 48

// EstimateContext estimates the tokens of r, the request a resume sends
// for s. The newest assistant message r re-sends that stores its usage
// gives the base: the prompt the provider counted for it (tokens.input +
// cache.read + cache.write) and its answer (tokens.output). What the
// request sends after that answer (its tool results, later messages, the
// next prompt) is counted from its bytes: 3 bytes a token for Tokens, 4
// for Low; an image counts ImageTokens. Without such a message every
// block is counted from its bytes, and the system prompt and tool
// definitions, which sessfix does not store, are not counted. compacted
// names tool parts to count as OpenCode sends a compacted one; a part
// counted in the base is then taken off at 4 bytes a token for Tokens
// and 3 for Low.
func EstimateContext(s *store.Session, r *sent.Request, compacted map[string]bool) ContextEstimate {
	return estimateContext(s, r, compacted, false)
}

// EstimateUncompacted is EstimateContext with every tool result counted
// whole, as if none were compacted: about the request a stored overflow
// was refused on before a prune (sessfix's or OpenCode's) cleared results.
func EstimateUncompacted(s *store.Session, r *sent.Request) ContextEstimate {
	return estimateContext(s, r, nil, true)
}

func estimateContext(s *store.Session, r *sent.Request, compacted map[string]bool, whole bool) ContextEstimate {
	e, _ := estimateSums(s, r, compacted, whole, nil)
	return e
}

// contextSums are the terms of an estimate: the measured base, the bytes
// and images counted after it, and what compacted results take off it.
type contextSums struct{ measured, added, images, savedHi, savedLo int }

func (c contextSums) tokens() int {
	return max(0, c.measured+(c.added+2)/3+c.images*ImageTokens-c.savedHi)
}

// less is c with the gain of compacting one more tool part.
func (c contextSums) less(g contextSums) contextSums {
	return contextSums{c.measured, c.added - g.added, c.images - g.images, c.savedHi + g.savedHi, c.savedLo + g.savedLo}
}

// estimateSums is estimateContext's work. With gains non-nil it also
// records, for each tool part a tool_result block sends, what compacting
// it would change in the sums (added bytes and images it no longer sends,
// or what it takes off the base), so that a prune can add parts one by
// one without estimating the request again: sums.less(gain) is exactly
// the sums with that part compacted too.
func estimateSums(s *store.Session, r *sent.Request, compacted map[string]bool, whole bool, gains map[string]contextSums) (ContextEstimate, contextSums) {
	var e ContextEstimate
	order := map[string]int{}
	for i, m := range s.Messages {
		order[m.ID] = i
	}
	sentIDs := map[string]bool{}
	for _, pm := range r.Messages {
		for _, id := range pm.Sources {
			sentIDs[id] = true
		}
	}
	base := -1
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		if m.Role == "assistant" && sentIDs[m.ID] && !m.Get("summary").Bool() && promptTokens(m) > 0 {
			base = i
			e.Base = m.ID
			e.Measured = promptTokens(m) + int(m.Get("tokens.output").Int())
			break
		}
	}
	var added, addedImages, savedHi, savedLo int
	for _, pm := range r.Messages {
		for _, b := range pm.Blocks {
			n, images := blockBytes(s, b, compacted, whole)
			after := b.MessageID == "" || base < 0 || order[b.MessageID] > base ||
				order[b.MessageID] == base && b.Type == "tool_result"
			if gains != nil && b.Type == "tool_result" && b.PartID != "" && !compacted[b.PartID] {
				nc, imagesC := blockBytes(s, b, map[string]bool{b.PartID: true}, whole)
				g := gains[b.PartID]
				if after {
					g.added += n - nc
					g.images += images - imagesC
				} else if n > nc {
					g.savedHi += (n - nc) / 4
					g.savedLo += (n - nc + 2) / 3
				}
				gains[b.PartID] = g
			}
			if after {
				added += n + blockOverhead
				addedImages += images
				continue
			}
			if b.Type == "tool_result" && compacted[b.PartID] {
				// Counted in the base as it was; it is cleared now.
				if full, _ := blockBytes(s, b, nil, whole); full > n {
					savedHi += (full - n) / 4
					savedLo += (full - n + 2) / 3
				}
			}
		}
	}
	e.Tokens = max(0, e.Measured+(added+2)/3+addedImages*ImageTokens-savedHi)
	e.Low = max(0, e.Measured+added/4+addedImages*ImageTokens-savedLo)
	return e, contextSums{e.Measured, added, addedImages, savedHi, savedLo}
}

// blockBytes is the size of what a block sends, in bytes, and the images
// it sends; whole counts a compacted tool result whole.
func blockBytes(s *store.Session, b sent.Block, compacted map[string]bool, whole bool) (n, images int) {
	switch b.Type {
	case "image":
		return 0, 1
	case "document":
		if p := FindPart(s, b.MessageID, b.PartID); p != nil {
			return len(p.Get("url").String()), 0
		}
		return 0, 0
	case "tool_use":
		if p := FindPart(s, b.MessageID, b.PartID); p != nil {
			return len(p.Get("state.input").Raw) + len(p.Get("tool").String()) + len(b.ToolUseID), 0
		}
	case "tool_result":
		p := FindPart(s, b.MessageID, b.PartID)
		if p == nil {
			return len(b.Text), 0
		}
		if compacted[p.ID] || !whole && p.Get("state.time.compacted").Exists() {
			return len(ClearedToolOutput), 0
		}
		if p.Get("state.status").String() == "error" {
			return len(p.Get("state.error").String()), 0
		}
		n = len(p.Get("state.output").String())
		for _, a := range p.Get("state.attachments").Array() {
			if mime := a.Get("mime").String(); len(mime) > 6 && mime[:6] == "image/" {
				images++
			} else {
				n += len(a.Get("url").String())
			}
		}
		return n, images
	}
	return len(b.Text) + len(b.Signature), 0
}

// protectedTools are the tools OpenCode 1.18.33's prune never clears
// (its PRUNE_PROTECTED_TOOLS).
var protectedTools = map[string]bool{"skill": true}

// PruneForWindow chooses the tool parts whose compaction (OpenCode's own
// prune: state.time.compacted, sent as ClearedToolOutput) brings r, the
// request a resume sends for s, under w's Target by EstimateContext:
// completed tool results r sends, not compacted yet, the oldest turn first
// and the largest output of a turn first, one after the other until the
// estimate fits. Never chosen: the turn a resume continues without a new
// prompt (the session's last message is an assistant turn without error
// that did not finish), a `skill` result (OpenCode's prune keeps them).
// fits is false when every candidate is not enough (parts is then every
// candidate); parts is empty when r fits already.
func PruneForWindow(s *store.Session, r *sent.Request, w ContextWindow) (parts []*store.Part, fits bool) {
	target := w.Target()
	if target <= 0 {
		return nil, false
	}
	gains := map[string]contextSums{}
	est, sums := estimateSums(s, r, nil, false, gains)
	if est.Tokens <= target {
		return nil, true
	}
	type cand struct {
		p          *store.Part
		turn, size int
	}
	order, turns := map[string]int{}, map[string]int{}
	turn := -1
	for i, m := range s.Messages {
		order[m.ID] = i
		if m.Role == "user" {
			turn = i
		}
		turns[m.ID] = turn
	}
	current := currentTurn(s)
	var cands []cand
	seen := map[string]bool{}
	for _, pm := range r.Messages {
		for _, b := range pm.Blocks {
			if b.Type != "tool_result" || seen[b.PartID] {
				continue
			}
			seen[b.PartID] = true
			p := FindPart(s, b.MessageID, b.PartID)
			if p == nil || p.Get("state.status").String() != "completed" || p.Get("state.time.compacted").Exists() ||
				protectedTools[p.Get("tool").String()] || current >= 0 && order[b.MessageID] > current {
				continue
			}
			cands = append(cands, cand{p: p, turn: turns[b.MessageID], size: len(p.Get("state.output").String())})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].turn != cands[j].turn {
			return cands[i].turn < cands[j].turn
		}
		return cands[i].size > cands[j].size
	})
	// Each part's gain is added to the sums instead of estimating the
	// request again for every part: the same numbers, in linear time
	// (TestPruneGainsExact).
	for _, c := range cands {
		sums = sums.less(gains[c.p.ID])
		parts = append(parts, c.p)
		if sums.tokens() <= target {
			return parts, true
		}
	}
	return parts, false
}

// currentTurn is the index of the user message whose turn a resume
// continues without a new prompt (the session's last message is an
// assistant turn without error that did not finish), or -1 when a resume
// starts a new turn with the user's next prompt.
func currentTurn(s *store.Session) int {
	if len(s.Messages) == 0 {
		return -1
	}
	last := s.Messages[len(s.Messages)-1]
	if last.Role != "assistant" || ErrorName(last) != "" {
		return -1
	}
	switch last.Get("finish").String() {
	case "", "tool-calls", "unknown":
	default:
		return -1
	}
	for i := len(s.Messages) - 1; i >= 0; i-- {
		if s.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}
