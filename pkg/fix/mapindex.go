package fix

import (
	"fmt"

	"github.com/sessfix/sessfix/pkg/sent"
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

func (o MapOptions) request() sent.Options {
	return sent.Options{Until: o.Until, AsOfError: o.AsOfError}
}

// ProviderMessages lists the messages array OpenCode sends for the session,
// entry by entry with the stored messages each came from. It is a view of
// sent.Build, the one conversion from stored messages to a
// provider's messages.N (docs/preflight.md); nothing here re-implements it.
func ProviderMessages(s *store.Session, opt MapOptions) []ProviderMessage {
	r := sent.Build(s, opt.request())
	out := make([]ProviderMessage, 0, len(r.Messages))
	for _, pm := range r.Messages {
		out = append(out, ProviderMessage{Role: pm.Role, Sources: append([]string(nil), pm.Sources...)})
	}
	return out
}

// MapProviderIndex maps a provider's messages.N to the one stored message it
// was built from, through sent.Request.LocateIndex. It fails, changing
// nothing, when N is out of range or the entry merges several stored
// messages: error-driven recovery never guesses a neighbour.
func MapProviderIndex(s *store.Session, n int, opt MapOptions) (string, error) {
	r := sent.Build(s, opt.request())
	id, _, err := r.LocateIndex(fmt.Sprintf("messages.%d", n))
	return id, err
}
