package opencode

import (
	"strings"
	"time"

	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Part classes from rules.md "Definitions". Every part is exactly one of
// content, thinking, meta or other (a blank or ignored text part, or a type
// OpenCode does not have).

// IsMetaPart reports whether p is bookkeeping OpenCode never sends as a block:
// step-start, step-finish, snapshot, patch, retry.
func IsMetaPart(p *store.Part) bool {
	switch p.Type {
	case "step-start", "step-finish", "snapshot", "patch", "retry":
		return true
	}
	return false
}

// IsThinkingPart reports whether p is thinking: OpenCode's reasoning, or the
// foreign thinking and redacted_thinking types other tools write.
func IsThinkingPart(p *store.Part) bool {
	switch p.Type {
	case "reasoning", "thinking", "redacted_thinking":
		return true
	}
	return false
}

// IsContentPart reports whether p gives its message content: a text part
// with non-whitespace text that is not ignored, a tool, file, subtask, agent
// or compaction part, or the foreign tool_use and tool_result types.
func IsContentPart(p *store.Part) bool {
	switch p.Type {
	case "text":
		return !IsBlankText(p) && !p.Get("ignored").Bool()
	case "tool", "file", "subtask", "agent", "compaction", "tool_use", "tool_result":
		return true
	}
	return false
}

// PartText returns the text of a text or thinking part; see sent.PartText.
func PartText(p *store.Part) string { return sent.PartText(p) }

// IsBlankText reports whether p is a text part whose text is empty or
// whitespace-only.
func IsBlankText(p *store.Part) bool {
	return p.Type == "text" && strings.TrimSpace(PartText(p)) == ""
}

// IsSigned reports whether a thinking part carries what the provider needs to
// accept it back: an Anthropic or Bedrock signature or redacted data (in
// OpenCode's metadata, or the foreign blocks' own fields). Empty thinking
// text with a signature is normal and counts as signed.
func IsSigned(p *store.Part) bool {
	switch p.Type {
	case "reasoning":
		for _, k := range []string{
			"metadata.anthropic.signature", "metadata.anthropic.redactedData",
			"metadata.bedrock.signature", "metadata.bedrock.redactedData",
		} {
			if p.Get(k).String() != "" {
				return true
			}
		}
	case "thinking":
		return p.Get("signature").String() != ""
	case "redacted_thinking":
		return p.Get("data").String() != ""
	}
	return false
}

// HasAnthropicSignature reports whether p is a reasoning part with a
// non-null metadata.anthropic.signature; see sent.HasAnthropicSignature.
func HasAnthropicSignature(p *store.Part) bool { return sent.HasAnthropicSignature(p) }

// IsSynthetic reports whether a repair tool (not the model) wrote the part.
func IsSynthetic(p *store.Part) bool { return sent.IsSynthetic(p) }

// FirstNonMeta returns the message's first part that is not a meta part, or
// nil. Every OpenCode assistant step begins with step-start, so "first part"
// always means this.
func FirstNonMeta(m *store.Message) *store.Part {
	for _, p := range m.Parts {
		if !IsMetaPart(p) {
			return p
		}
	}
	return nil
}

// ThinkingParts returns the message's thinking parts in order.
func ThinkingParts(m *store.Message) []*store.Part {
	var out []*store.Part
	for _, p := range m.Parts {
		if IsThinkingPart(p) {
			out = append(out, p)
		}
	}
	return out
}

// HasContent reports whether any part of the message is a content part.
func HasContent(m *store.Message) bool {
	for _, p := range m.Parts {
		if IsContentPart(p) {
			return true
		}
	}
	return false
}

// OwnsSignedThinking reports whether the message has a signed thinking part.
func OwnsSignedThinking(m *store.Message) bool {
	for _, p := range m.Parts {
		if IsThinkingPart(p) && IsSigned(p) {
			return true
		}
	}
	return false
}

// Message classes.

// ErrorName returns the message's error.name ("" when it has no error).
func ErrorName(m *store.Message) string { return sent.ErrorName(m) }

// StoredErrorType classifies the provider error stored on an assistant
// message (its error.data.message; ErrorNone for none), the way
// ErrorTypeNamed reads it with the message's error name.
func StoredErrorType(m *store.Message) ErrorType {
	return ErrorTypeNamed(m.Get("error.data.message").String(), ErrorName(m))
}

// ErrorTypeNamed classifies an error text stored under an error name:
// DetectErrorType's class, else a context overflow when OpenCode named it a
// ContextOverflowError. The text decides first: 1.18.33 stores an HTTP 413,
// a request over a size limit, as a ContextOverflowError too.
func ErrorTypeNamed(text, name string) ErrorType {
	t := DetectErrorType(text)
	if t == ErrorNone && name == ContextOverflowName {
		return ErrorContextOverflow
	}
	return t
}

// IsCompleted reports whether the assistant message has time.completed.
func IsCompleted(m *store.Message) bool {
	return m.Get("time.completed").Int() > 0
}

// SkippedByOpenCode reports whether OpenCode leaves the message out when it
// builds a request, whatever the provider; see sent.SkippedByOpenCode.
func SkippedByOpenCode(m *store.Message) bool { return sent.SkippedByOpenCode(m) }

// History returns the ids of the messages OpenCode still loads as history:
// everything from the last completed compaction on (a compaction is complete
// when its summary assistant message has finished without error), as the
// store's OpenCode version decides it (historyOrder, which the preflight's
// request is built from). Messages before it stay on disk but are never
// sent again.
func History(s *store.Session) map[string]bool {
	hist := sent.HistoryOrder(s.Messages, sent.VersionOf(s))
	out := make(map[string]bool, len(hist))
	for _, m := range hist {
		out[m.ID] = true
	}
	return out
}

// StreamingMaxQuiet bounds how long a message can still be streaming: when
// the newest timestamp inside the session's records is older than this, the
// file times are ignored (SettlePolicy.LastChange): a copy, a restore or a
// git checkout renews file times but not the times OpenCode wrote.
const StreamingMaxQuiet = 24 * time.Hour

// LastActivity returns the newest time OpenCode wrote into the session's
// message and part bodies (time.created, time.completed, time.start,
// time.end, and a tool's state.time), or the zero time when there is none.
func LastActivity(s *store.Session) time.Time {
	var ms int64
	upd := func(r *store.Record, keys ...string) {
		for _, k := range keys {
			if v := r.Get(k).Int(); v > ms {
				ms = v
			}
		}
	}
	for _, m := range s.Messages {
		upd(&m.Record, "time.created", "time.completed")
		for _, p := range m.Parts {
			upd(&p.Record, "time.start", "time.end", "state.time.start", "state.time.end")
		}
	}
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
