package sent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/internal/plural"
)

// Form is the way a provider writes an index into its request.
type Form string

// The index forms the providers print.
const (
	FormMessages Form = "messages.N"  // Anthropic, Bedrock: messages.N or messages.N.content.M
	FormBracket  Form = "messages[N]" // Chat Completions: messages[N]
	FormAtIndex  Form = "index N"     // DeepSeek "at message index N", Kimi "at index N" (messages[N])
	FormInput    Form = "input[N]"    // Responses: input[N]
	FormContents Form = "contents[N]" // Gemini: contents[N]
	FormPosition Form = "position N"  // Gemini's missing-signature error: contents[N-1]
)

// Index is a position in a request as a provider prints it.
type Index struct {
	Form Form
	// N is the number the provider printed; M the content block (-1 when
	// the index names none).
	N, M int
	// Text is the index as printed ("messages.3.content.0", "input[2]").
	Text string
}

var indexForms = []struct {
	form Form
	re   *regexp.Regexp
}{
	{FormMessages, regexp.MustCompile(`messages\.(\d+)(?:\.content\.(\d+))?`)},
	{FormBracket, regexp.MustCompile(`messages\[(\d+)\]`)},
	{FormInput, regexp.MustCompile(`input\[(\d+)\]`)},
	{FormContents, regexp.MustCompile(`contents\[(\d+)\]`)},
	{FormAtIndex, regexp.MustCompile(`at (?:message )?index (\d+)`)},
	{FormPosition, regexp.MustCompile(`position (\d+)`)},
}

// ParseIndex finds the first provider index in text, in any of the forms
// (the earliest in the text wins).
func ParseIndex(text string) (Index, bool) {
	best, at := Index{}, -1
	for _, f := range indexForms {
		loc := f.re.FindStringSubmatchIndex(text)
		if loc == nil || (at >= 0 && loc[0] >= at) {
			continue
		}
		n, err := strconv.Atoi(text[loc[2]:loc[3]])
		if err != nil {
			continue
		}
		ix := Index{Form: f.form, N: n, M: -1, Text: text[loc[0]:loc[1]]}
		if len(loc) > 4 && loc[4] >= 0 {
			if ix.M, err = strconv.Atoi(text[loc[4]:loc[5]]); err != nil {
				continue
			}
		}
		best, at = ix, loc[0]
	}
	return best, at >= 0
}

// Entry returns the request entry (Request.Messages index) an index names:
// N, except Gemini's 1-based position.
func (ix Index) Entry() int {
	if ix.Form == FormPosition {
		return ix.N - 1
	}
	return ix.N
}

// Index prints entry n (block m, or -1 for the entry) the way the request's
// family prints it.
func (r *Request) Index(n, m int) string {
	switch r.Kind {
	case Chat:
		return fmt.Sprintf("messages[%d]", n)
	case Responses:
		return fmt.Sprintf("input[%d]", n)
	case Google:
		return fmt.Sprintf("contents[%d]", n)
	}
	if m < 0 {
		return fmt.Sprintf("messages.%d", n)
	}
	return fmt.Sprintf("messages.%d.content.%d", n, m)
}

// BlockIndex prints block m of entry n the way the request's family names
// the place it is sent in: Anthropic's and Bedrock's messages.N.content.M,
// a Responses user item's input[N].content[M] (every other item is one
// block: input[N]), Gemini's contents[N].parts[M], and a Chat Completions
// message's content (the joined text of an assistant step, or a user's
// only text), content[M], reasoning_content or tool_calls[K].
func (r *Request) BlockIndex(n, m int) string {
	entry := r.Index(n, -1)
	switch r.Kind {
	case Responses:
		if n < len(r.Messages) && r.Messages[n].Role == "user" {
			return fmt.Sprintf("%s.content[%d]", entry, m)
		}
		return entry
	case Google:
		return fmt.Sprintf("%s.parts[%d]", entry, m)
	case Chat:
		if n >= len(r.Messages) || m < 0 || m >= len(r.Messages[n].Blocks) {
			return entry
		}
		pm := r.Messages[n]
		switch pm.Role {
		case "user":
			if len(pm.Blocks) == 1 && pm.Blocks[0].Type == "text" {
				return entry + ".content"
			}
			return fmt.Sprintf("%s.content[%d]", entry, m)
		case "assistant":
			switch b := pm.Blocks[m]; b.Type {
			case "reasoning":
				return entry + ".reasoning_content"
			case "tool_use":
				k := 0
				for _, o := range pm.Blocks[:m] {
					if o.Type == "tool_use" {
						k++
					}
				}
				return fmt.Sprintf("%s.tool_calls[%d]", entry, k)
			}
			return entry + ".content"
		}
		return entry
	}
	return r.Index(n, m)
}

// Locate maps entry n, block m of the request to the stored record it came
// from; m < 0 asks for the entry itself, which maps only when the entry was
// built from exactly one stored message (its part too when the entry is one
// block: a tool message, a Responses item). ok is false when the index is
// out of range, names the next prompt or the system prompt, or combines
// several stored messages.
func (r *Request) Locate(n, m int) (msgID, partID string, ok bool) {
	if r == nil || n < 0 || n >= len(r.Messages) {
		return "", "", false
	}
	pm := r.Messages[n]
	if m < 0 {
		if len(pm.Sources) != 1 {
			return "", "", false
		}
		if len(pm.Blocks) == 1 && pm.Blocks[0].MessageID == pm.Sources[0] && r.Kind != Anthropic && r.Kind != Bedrock {
			return pm.Sources[0], pm.Blocks[0].PartID, true
		}
		return pm.Sources[0], "", true
	}
	if m >= len(pm.Blocks) {
		return "", "", false
	}
	b := pm.Blocks[m]
	if b.MessageID == "" {
		return "", "", false
	}
	return b.MessageID, b.PartID, true
}

// array names the request's history array as errors about it say it.
func (r *Request) array() (one, many string) {
	switch r.Kind {
	case Responses:
		return "input item", "input items"
	case Google:
		return "content", "contents"
	}
	return "message", "messages"
}

// LocateIndex maps an index as a provider prints it, in any form
// ("messages.3.content.0", "messages[2]", "at message index 2", "input[4]",
// "contents[1]", "position 2"), to the stored message and part. An index
// that names the system or next prompt, is past the entry's end or names an
// entry built from several stored messages maps to nothing: it never guesses
// a neighbour. The error says why an index does not map.
func (r *Request) LocateIndex(index string) (msgID, partID string, err error) {
	ix, ok := ParseIndex(index)
	if !ok {
		return "", "", fmt.Errorf("%q holds no index a provider prints (messages.N, messages[N], input[N], contents[N], position N)", index)
	}
	return r.LocateAt(ix)
}

// LocateAt maps a parsed index; see LocateIndex.
func (r *Request) LocateAt(ix Index) (msgID, partID string, err error) {
	n, m := ix.Entry(), ix.M
	one, many := r.array()
	if n < 0 || n >= len(r.Messages) {
		return "", "", fmt.Errorf("%s is outside the %s opencode sends for this session", ix.Text, plural.Count(len(r.Messages), one, many))
	}
	pm := r.Messages[n]
	if m >= 0 {
		if m >= len(pm.Blocks) {
			return "", "", fmt.Errorf("%s has %s, so content.%d names none of them", r.Index(n, -1), plural.Count(len(pm.Blocks), "content block", "content blocks"), m)
		}
		if id, part, ok := r.Locate(n, m); ok {
			return id, part, nil
		}
		return "", "", fmt.Errorf("%s is the next prompt, not a stored record", ix.Text)
	}
	if id, part, ok := r.Locate(n, -1); ok {
		return id, part, nil
	}
	switch {
	case pm.Role == "system" || pm.Role == "developer":
		return "", "", fmt.Errorf("%s is the %s prompt opencode adds, not a stored record", ix.Text, pm.Role)
	case len(pm.Sources) == 0:
		return "", "", fmt.Errorf("%s is the next prompt, not a stored record", ix.Text)
	}
	return "", "", fmt.Errorf("%s combines stored messages %s, so it names none of them exactly", ix.Text, strings.Join(pm.Sources, ", "))
}
