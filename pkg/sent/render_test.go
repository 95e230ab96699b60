package sent_test

import (
	"fmt"
	"strings"

	"github.com/sessfix/sessfix/pkg/sent"
)

// render prints a request compactly: one line per entry with its blocks'
// types ("reasoning_content" marks a Chat Completions entry sent with the
// field, "signed" a block sent with a signature).
func render(r *sent.Request) string {
	var b strings.Builder
	for n, pm := range r.Messages {
		var types []string
		for _, bl := range pm.Blocks {
			t := bl.Type
			if bl.Signature != "" && bl.Type != "thinking" {
				t += "(signed)"
			}
			types = append(types, t)
		}
		extra := ""
		if pm.SendsReasoning {
			extra = " reasoning_content"
		}
		if len(pm.Dropped) > 0 {
			extra += fmt.Sprintf(" dropped:%d", len(pm.Dropped))
		}
		fmt.Fprintf(&b, "%d %s [%s]%s\n", n, pm.Role, strings.Join(types, " "), extra)
	}
	return b.String()
}
