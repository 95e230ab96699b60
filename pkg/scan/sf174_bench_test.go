package scan

import (
	"fmt"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// bigOverflowSession is a session of turns user prompts, each answered
// by an assistant step that read reads files of 8 kB, stored with its
// usage, then the overflow OpenCode stores with compaction.auto false:
// "prompt is too long" over a window of a third of the history's tokens.
func bigOverflowSession(turns, reads int) *store.Session {
	var msgs []*store.Message
	tokens := 7600
	for i := range turns {
		msgs = append(msgs, user(fmt.Sprintf("u%d", i), fmt.Sprintf("please read batch %d", i)))
		parts := []string{`{"type":"step-start"}`, `{"type":"text","text":"I will read the files."}`}
		for j := range reads {
			parts = append(parts, readPart(i*reads+j, 8000))
		}
		body := fmt.Sprintf(`{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":2,"completed":3},"finish":"tool-calls","tokens":{"input":%d,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}`, tokens)
		msgs = append(msgs, testMessage(fmt.Sprintf("a%d", i), "assistant", body, parts...))
		tokens += reads * 2000
	}
	window := tokens / 3
	failed := fmt.Sprintf(`{"role":"assistant","providerID":"anthropic","modelID":"claude-sonnet-4-5","time":{"created":4,"completed":5},"finish":"error",`+
		`"error":{"name":"ContextOverflowError","data":{"message":"prompt is too long: %d tokens > %d maximum"}},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}`, tokens, window)
	msgs = append(msgs, testMessage("afail", "assistant", failed))
	return session(store.ShapeSQLite, msgs...)
}

// BenchmarkContextEstimate measures SF174's work on sessions of growing
// size (turns of 4 reads of 8 kB; 250 turns are 1,000 tool results, 8 MB
// of output): the estimate of the next request alone, the prune it plans
// (which estimates again after each result it adds), and the rule's
// whole check (the request pkg/sent builds, the window, the estimate and
// the prune).
//
//	go test -run '^$' -bench ContextEstimate -benchmem ./pkg/scan
func BenchmarkContextEstimate(b *testing.B) {
	for _, turns := range []int{25, 100, 250} {
		s := bigOverflowSession(turns, 4)
		r := sent.Build(s, sent.Options{NextPrompt: true})
		w, ok := opencode.WindowOf(s, nil)
		if !ok {
			b.Fatal("no window")
		}
		b.Run(fmt.Sprintf("estimate/turns=%d", turns), func(b *testing.B) {
			for b.Loop() {
				opencode.EstimateContext(s, r, nil)
			}
		})
		b.Run(fmt.Sprintf("prune/turns=%d", turns), func(b *testing.B) {
			var n int
			for b.Loop() {
				parts, fits := opencode.PruneForWindow(s, r, w)
				if !fits {
					b.Fatal("the prune does not fit")
				}
				n = len(parts)
			}
			b.ReportMetric(float64(n), "pruned")
		})
		b.Run(fmt.Sprintf("check/turns=%d", turns), func(b *testing.B) {
			for b.Loop() {
				var out []Finding
				c := &Context{Session: s, Opts: settled(), rule: ruleSF174, out: &out}
				checkContextWindow(c)
				if len(out) == 0 {
					b.Fatal("no SF174")
				}
			}
		})
	}
}
