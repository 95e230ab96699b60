package scan

import "testing"

// SF302 reads what every other rule reported in the same check (othersFound),
// which holds only while it runs last among the rules of OpenCode's 1.x
// records, that is while it has the highest code of them. The OpenCode 2
// rules (SF4xx) come after it: they say nothing about the history a
// provider is sent, so SF302 has no use for their findings; nor do the
// store-health rules (SF5xx), which check no session.
func TestFailedAttemptRunsLast(t *testing.T) {
	var last string
	for _, r := range Rules() {
		if !r.OpenCode2 && r.Check != nil {
			last = r.Code
		}
	}
	if last != "SF302" {
		t.Fatalf("the last 1.x rule is %s; SF302 must run after every other one (see othersFound)", last)
	}
}
