//go:build acceptance

package e2e

import (
	"strings"
	"testing"

	"github.com/sessfix/sessfix/internal/opencodetest/mockanthropic"
)

func TestTrimDocsTail(t *testing.T) {
	full := mockanthropic.MsgExpectedThinking(3, "tool_use")
	i := strings.Index(full, " Please consult")
	if i < 0 {
		t.Fatalf("the mock's text has no documentation tail: %q", full)
	}
	short := full[:i]
	if trimDocsTail(full) != trimDocsTail(short) {
		t.Errorf("texts differing only by the docs link compare unequal:\n%q\n%q", trimDocsTail(full), trimDocsTail(short))
	}
	if got := trimDocsTail(full); strings.Contains(got, "http") || !strings.HasSuffix(got, "disable `thinking`.") {
		t.Errorf("trimDocsTail(%q) = %q", full, got)
	}
	// Anything else must still differ.
	a := mockanthropic.MsgThinkingNotFirst(1, "text")
	b := mockanthropic.MsgThinkingNotFirst(2, "text")
	if trimDocsTail(a) == trimDocsTail(b) {
		t.Errorf("different indexes compare equal: %q", trimDocsTail(a))
	}
}

func TestIDAfter(t *testing.T) {
	id := "prt_1fed631dc001ERjTjlSVWBAxi1"
	next := "prt_1fed631e4001shIintW4SfQLKC"
	got := idAfter(t, id, next)
	if !(id < got && got < next) || len(got) != len(id) || !strings.HasPrefix(got, "prt_1fed631dc002") {
		t.Errorf("idAfter(%s, %s) = %s", id, next, got)
	}
}

func TestRenderCompatEscapes(t *testing.T) {
	rows := []outcome{{
		Scenario: "s", What: "w", Version: "1.18.33",
		Before: verdict{State: "rejected", Error: "a | b `c`"},
		After:  verdict{State: "accepted", Serve: 200},
	}}
	doc := string(renderCompat(rows, nil, nil, nil, nil))
	if !strings.Contains(doc, "rejected: `` a \\| b `c` ``") {
		t.Errorf("the error cell is not escaped:\n%s", doc)
	}
	if !strings.Contains(doc, "Every scenario above resumes") {
		t.Errorf("a run where every scenario resumed is not said so:\n%s", doc)
	}
	rows[0].After = verdict{State: "rejected", Error: "x"}
	if doc := string(renderCompat(rows, nil, nil, nil, nil)); !strings.Contains(doc, "- `s` on OpenCode 1.18.33: after the fix rejected") {
		t.Errorf("a scenario still refused after the fix is not listed:\n%s", doc)
	}
}

func TestRenderFamilies(t *testing.T) {
	rows := []familyOutcome{{
		Case: "c", What: "w | x", Model: "openai/gpt-5.2", Predicted: "yes: SF164, the same text",
		Before:   verdict{State: "rejected", Error: hideIDs("Item 'rs_ef64ef4ed983c61b16a7db5f' of type 'reasoning'")},
		Recovery: "reasoning_without_following_item", Fix: "dropEncryptedReasoning|excludeMessage",
		After: verdict{State: "accepted"},
	}}
	doc := string(renderCompat(nil, rows, nil, nil, nil))
	for _, want := range []string{
		"## Provider families: recovery from the stored error",
		"| c | openai/gpt-5.2 | w \\| x | yes: SF164, the same text | rejected: `` Item 'rs_…' of type 'reasoning' `` | reasoning_without_following_item | `dropEncryptedReasoning\\|excludeMessage` | accepted |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the families section lacks %q:\n%s", want, doc)
		}
	}
}

func TestSpliceSection(t *testing.T) {
	const h = "\n## B\n"
	doc := []byte("# T\n\n## A\na\n\n## C\nc\n")
	got := spliceSection(doc, h, []byte(h+"\nb1\n"))
	if string(got) != "# T\n\n## A\na\n\n## B\n\nb1\n\n## C\nc\n" {
		t.Errorf("insert:\n%s", got)
	}
	again := spliceSection(got, h, []byte(h+"\nb2\n"))
	if string(again) != "# T\n\n## A\na\n\n## B\n\nb2\n\n## C\nc\n" {
		t.Errorf("replace:\n%s", again)
	}
}
