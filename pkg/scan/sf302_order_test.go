package scan

import "testing"

// SF302 reads what every other rule reported in the same check (othersFound),
// which holds only while it runs last among the rules of OpenCode's 1.x
// records (runOrder), whatever its code: SF303 and later sort after it. The
// OpenCode 2 rules (SF4xx) come after it: they say nothing about the history
// a provider is sent, so SF302 has no use for their findings; nor do the store-health rules
// (SF5xx), which check no session.
func TestFailedAttemptRunsLast(t *testing.T) {
	var last string
	sawV2 := false
	for _, r := range runOrder() {
		if r.OpenCode2 {
			sawV2 = true
			continue
		}
		if sawV2 {
			t.Fatalf("1.x rule %s runs after an OpenCode 2 rule", r.Code)
		}
		last = r.Code
	}
	if last != "SF302" {
		t.Fatalf("the last 1.x rule to run is %s; SF302 must run after every other one (see othersFound)", last)
	}
	if Lookup("SF303") == nil {
		t.Fatal("SF303 is not registered: the test no longer covers a rule whose code sorts after SF302")
	}
	if len(runOrder()) != len(Rules()) {
		t.Fatalf("runOrder has %d rules, Rules %d", len(runOrder()), len(Rules()))
	}
}
