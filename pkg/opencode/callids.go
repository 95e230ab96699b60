package opencode

import (
	"crypto/sha256"
	"math/big"
	"strconv"
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Mistral's API takes only tool call ids of nine letters or digits
// (sent.ValidMistralCallID). OpenCode keeps the id the provider that made
// a call minted (Anthropic's toolu_…, OpenAI's call_…) as the tool part's
// callID and sends it as it is to a Mistral model it does not know as
// Mistral's (sent.NormalizesCallIDs), so a session resumed on such a model
// after another provider's tool calls is refused on every retry.

// ForeignCallID reports a tool part whose callID is not of Mistral's form.
func ForeignCallID(p *store.Part) bool {
	return p.Type == "tool" && !sent.ValidMistralCallID(p.Get("callID").String())
}

// MistralCallIDs maps every callID of the session's tool parts that is not
// of Mistral's form to one that is: derived from the old id (a hash of it,
// in letters and digits), the same for every part that shares the old id,
// and unlike every other callID of the session. The map is the same for
// the same session.
func MistralCallIDs(s *store.Session) map[string]string {
	taken := map[string]bool{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type == "tool" {
				taken[p.Get("callID").String()] = true
			}
		}
	}
	out := map[string]string{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			old := p.Get("callID").String()
			if !ForeignCallID(p) || out[old] != "" {
				continue
			}
			id := derivedCallID(old, 0)
			for n := 1; taken[id]; n++ {
				id = derivedCallID(old, n)
			}
			taken[id] = true
			out[old] = id
		}
	}
	return out
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// derivedCallID is nine base-62 digits of the SHA-256 of the old id (and
// n, the attempt, when it is not the first).
func derivedCallID(old string, n int) string {
	in := old
	if n > 0 {
		in += "#" + strconv.Itoa(n)
	}
	sum := sha256.Sum256([]byte(in))
	v := new(big.Int).SetBytes(sum[:])
	b := make([]byte, 9)
	base := big.NewInt(62)
	r := new(big.Int)
	for i := range b {
		v.DivMod(v, base, r)
		b[i] = base62[r.Int64()]
	}
	return string(b)
}

// BadToolUseIDs returns the tool parts (by part id) whose callID the
// Messages API refuses as a tool_use id once OpenCode sent it: an empty
// one, or one an earlier tool part of the session has too (compared in
// the form OpenCode sends, sent.ClaudeToolID). The first part with an id keeps
// it.
func BadToolUseIDs(s *store.Session) map[string]bool {
	out := map[string]bool{}
	seen := map[string]bool{}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			if p.Type != "tool" {
				continue
			}
			id := sent.ClaudeToolID(p.Get("callID").String())
			if id == "" || seen[id] {
				out[p.ID] = true
			}
			seen[id] = true
		}
	}
	return out
}

// NewToolUseID is the callID sessfix gives a tool part whose id the
// Messages API refuses: letters, digits and _ only, from the part's own id
// (unique in the store), so unlike every other call's.
func NewToolUseID(partID string) string {
	return "toolu_sessfix_" + sent.ClaudeToolID(strings.TrimPrefix(partID, "prt_"))
}
