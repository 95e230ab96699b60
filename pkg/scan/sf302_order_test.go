package scan

import "testing"

// SF302 reads what every other rule reported in the same check (othersFound),
// which holds only while it runs last, that is while it has the highest code.
func TestFailedAttemptRunsLast(t *testing.T) {
	rules := Rules()
	if last := rules[len(rules)-1].Code; last != "SF302" {
		t.Fatalf("the last rule is %s; SF302 must run after every other rule (see othersFound)", last)
	}
}
