package surgery

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/sessfix/sessfix/pkg/fix"
	"github.com/sessfix/sessfix/pkg/store"
)

// totals are a session's cost and token totals: what its assistant
// messages spent. OpenCode adds each assistant message's cost and tokens
// to the session's record as the turn ends (a SQLite row's cost and
// tokens_* columns; the record's cost and tokens in shapes that keep them),
// in message order, so the record holds their sum.
type totals struct {
	cost float64
	tok  [5]int64 // input, output, reasoning, cache read, cache write
}

// totalKeys are the keys of the token totals in a session record, in the
// order of totals.tok: a SQLite row's columns, and the paths in the other
// shapes' records.
var totalKeys = [5]struct{ column, path string }{
	{"tokens_input", "tokens.input"}, {"tokens_output", "tokens.output"}, {"tokens_reasoning", "tokens.reasoning"},
	{"tokens_cache_read", "tokens.cache.read"}, {"tokens_cache_write", "tokens.cache.write"},
}

// sumTotals adds up the totals of msgs' assistant messages, in order, as
// OpenCode does.
func sumTotals(msgs []*store.Message) totals {
	var t totals
	for _, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		t.cost += m.Get("cost").Float()
		for i, k := range totalKeys {
			t.tok[i] += m.Get(k.path).Int()
		}
	}
	return t
}

// totalKey is where total i (-1 for the cost) is in s's record, and
// whether the record has a place for it: a SQLite row the column, another
// record the key itself (the cost) or the object holding it (a token
// count).
func totalKey(s *store.Session, raw []byte, i int) (string, bool) {
	if i < 0 {
		return "cost", gjson.GetBytes(raw, "cost").Exists()
	}
	if columns(s) {
		return totalKeys[i].column, gjson.GetBytes(raw, totalKeys[i].column).Exists()
	}
	p := totalKeys[i].path
	return p, gjson.GetBytes(raw, p[:strings.LastIndexByte(p, '.')]).IsObject()
}

// setTotals writes t into raw, s's record, where the record has a place
// for each total (totalKey); every other byte stays.
func setTotals(s *store.Session, raw []byte, t totals) ([]byte, error) {
	var err error
	if k, ok := totalKey(s, raw, -1); ok {
		if raw, err = fix.SetJSON(raw, t.cost, k); err != nil {
			return nil, err
		}
	}
	for i, v := range t.tok {
		k, ok := totalKey(s, raw, i)
		if !ok {
			continue
		}
		if raw, err = fix.SetJSON(raw, v, strings.Split(k, ".")...); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// heldTotals reads the totals s's record holds (zero where it has none).
func heldTotals(s *store.Session, raw []byte) totals {
	var t totals
	t.cost = gjson.GetBytes(raw, "cost").Float()
	for i := range t.tok {
		k, _ := totalKey(s, raw, i)
		t.tok[i] = gjson.GetBytes(raw, k).Int()
	}
	return t
}

// cutTotals are the totals s's record holds once the messages gone are
// removed. Each total the record holds as OpenCode keeps it, the sum over
// every message, becomes the sum over the messages kept (the same float
// additions OpenCode would have made); one that differs (OpenCode counted
// something sessfix cannot see) loses what the removed messages spent, and
// never goes below zero.
func cutTotals(s *store.Session, raw []byte, gone map[string]bool) totals {
	var kept, removed []*store.Message
	for _, m := range s.Messages {
		if gone[m.ID] {
			removed = append(removed, m)
		} else {
			kept = append(kept, m)
		}
	}
	held, all, k, r := heldTotals(s, raw), sumTotals(s.Messages), sumTotals(kept), sumTotals(removed)
	out := k
	if held.cost != all.cost {
		out.cost = max(0, held.cost-r.cost)
	}
	for i := range out.tok {
		if held.tok[i] != all.tok[i] {
			out.tok[i] = max(0, held.tok[i]-r.tok[i])
		}
	}
	return out
}

// totalsEdit is the update of s's record that takes the totals of the
// messages gone off it, with a note saying so; nil when the record holds
// no totals or they do not change.
func totalsEdit(s *store.Session, gone map[string]bool, rule string) (*store.Edit, string, error) {
	if s.Info == nil || s.Info.Err != nil {
		return nil, "", nil
	}
	raw := s.Info.Raw
	before, after := heldTotals(s, raw), cutTotals(s, raw, gone)
	if before == after {
		return nil, "", nil
	}
	out, err := setTotals(s, raw, after)
	if err != nil {
		return nil, "", fmt.Errorf("session %s: %w", s.ID, err)
	}
	if string(out) == string(raw) {
		return nil, "", nil
	}
	sum := func(t totals) int64 { return t.tok[0] + t.tok[1] + t.tok[2] + t.tok[3] + t.tok[4] }
	why := fmt.Sprintf("its totals without the removed messages: cost %.6f → %.6f, %d → %d tokens",
		before.cost, after.cost, sum(before), sum(after))
	return &store.Edit{
		Op: store.OpUpdate, Kind: store.KindSession, ID: s.ID, SessionID: s.ID,
		Loc: s.Info.Loc, Before: raw, After: out, Rule: rule, Mutation: "setSessionTotals", Reason: why,
	}, "update the session record, " + why, nil
}
