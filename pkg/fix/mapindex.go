package fix

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
)

// ProviderMessage is one entry of the messages array a provider receives,
// as OpenCode builds it from the stored session, with the stored messages it
// came from.
type ProviderMessage struct {
	Role string // "user" or "assistant"
	// Sources are the ids of the stored messages whose content the entry
	// holds, in order (one assistant message's steps count once; tool
	// results belong to the assistant message that called the tools).
	Sources []string
}

// MapOptions say which history to rebuild.
type MapOptions struct {
	// Until stops before this stored message (the errored assistant message
	// of a failed attempt: the request that failed held only what came
	// before it). Empty means the whole session.
	Until string
	// AsOfError counts assistant messages that sessfix excluded as still
	// sent: an error stored before a repair indexes the history as it was.
	AsOfError bool
}

// ProviderMessages rebuilds the messages array OpenCode sends for the
// session (OpenCode 1.18's conversion, opencode-storage.md section 6):
//   - only messages since the last completed compaction (scan.History);
//   - messages with no parts are skipped, and assistant messages with an
//     error other than an abort with content (scan.SkippedByOpenCode);
//   - user messages keep text that is not ignored (non-empty for Anthropic
//     and Bedrock), files, compactions and subtasks; with none they are
//     skipped;
//   - an assistant message becomes one entry per step (step-start starts a
//     step) holding its text, reasoning and tool calls, followed by a user
//     entry with the tool results when the step called tools; a step with
//     none of those adds nothing. Unsigned reasoning is dropped inside the
//     entry by the SDK, which keeps the entry (then empty);
//   - consecutive entries of the same role are merged, as the Anthropic
//     conversion does.
//
// This is THE single mapping from a provider's messages.N to stored
// messages: error-driven recovery uses nothing else. It moves to the
// preflight builder in pkg/scan once that exists.
func ProviderMessages(s *store.Session, opt MapOptions) []ProviderMessage {
	hist := scan.History(s)
	anthropic := dropsEmptyText(s)
	var out []ProviderMessage
	add := func(role, src string) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			last := &out[n-1]
			if last.Sources[len(last.Sources)-1] != src {
				last.Sources = append(last.Sources, src)
			}
			return
		}
		out = append(out, ProviderMessage{Role: role, Sources: []string{src}})
	}
	for _, m := range s.Messages {
		if opt.Until != "" && m.ID == opt.Until {
			break
		}
		if !hist[m.ID] || len(m.Parts) == 0 {
			continue
		}
		if m.Role == "assistant" && scan.SkippedByOpenCode(m) && !(opt.AsOfError && excludedBySessfix(m)) {
			continue
		}
		if m.Role != "assistant" {
			for _, p := range m.Parts {
				if userSends(p, anthropic) {
					add("user", m.ID)
					break
				}
			}
			continue
		}
		for _, st := range stepRanges(m) {
			block, tools := false, false
			for _, p := range m.Parts[st[0]:st[1]] {
				switch {
				case p.Type == "text":
					block = block || !anthropic || scan.PartText(p) != ""
				case p.Type == "reasoning":
					block = true
				case p.Type == "tool":
					block, tools = true, true
				}
			}
			if block {
				add("assistant", m.ID)
			}
			if tools {
				add("user", m.ID)
			}
		}
	}
	return out
}

func userSends(p *store.Part, anthropic bool) bool {
	switch p.Type {
	case "text":
		return !p.Get("ignored").Bool() && (!anthropic || scan.PartText(p) != "")
	case "file", "compaction", "subtask":
		return true
	}
	return false
}

// dropsEmptyText reports whether the session's provider is one for which
// OpenCode drops empty text (Anthropic, Bedrock): judged from the newest
// message that names a provider or model.
func dropsEmptyText(s *store.Session) bool {
	for i := len(s.Messages) - 1; i >= 0; i-- {
		m := s.Messages[i]
		prov := m.Get("providerID").String()
		model := m.Get("modelID").String()
		if prov == "" {
			prov, model = m.Get("model.providerID").String(), m.Get("model.modelID").String()
		}
		if prov == "" && model == "" {
			continue
		}
		l := strings.ToLower(prov + " " + model)
		return strings.Contains(l, "anthropic") || strings.Contains(l, "bedrock") || strings.Contains(l, "claude")
	}
	return true
}

// excludedBySessfix reports an assistant message sessfix's excludeMessage
// closed.
func excludedBySessfix(m *store.Message) bool {
	return m.Get("error.name").String() == "UnknownError" &&
		strings.HasPrefix(m.Get("error.data.message").String(), "excluded by sessfix: ")
}

// MapProviderIndex maps a provider's messages.N to the one stored message it
// was built from. It fails, changing nothing, when N is out of range or the
// entry merges several stored messages: error-driven recovery never guesses
// a neighbour.
func MapProviderIndex(s *store.Session, n int, opt MapOptions) (string, error) {
	list := ProviderMessages(s, opt)
	if n < 0 || n >= len(list) {
		return "", fmt.Errorf("messages.%d is outside the %d messages opencode sends for this session", n, len(list))
	}
	src := list[n].Sources
	if len(src) != 1 {
		return "", fmt.Errorf("messages.%d combines stored messages %s, so it names none of them exactly", n, strings.Join(src, ", "))
	}
	return src[0], nil
}
