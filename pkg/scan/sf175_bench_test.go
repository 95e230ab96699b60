package scan

import (
	"fmt"
	"testing"

	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/sent"
)

// BenchmarkRequestSize measures SF175's walk of a request's files (and
// SF172's count of documents, the same walk) on long sessions without any
// file: it must grow with the session, not with its square.
func BenchmarkRequestSize(b *testing.B) {
	for _, turns := range []int{250, 1000} {
		s := bigOverflowSession(turns, 4)
		r := sent.Build(s, sent.Options{NextPrompt: true})
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			for b.Loop() {
				if vs := checkRequestSize(opencode.RequestFiles(s, r)); len(vs) != 0 {
					b.Fatalf("findings on a session without files: %v", vs)
				}
			}
		})
	}
}
