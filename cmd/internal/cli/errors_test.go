package cli

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestHintsAcrossWrapping(t *testing.T) {
	base := errors.New("no opencode store found")
	err := fmt.Errorf("scan: %w", WithHints(WithHints(base, "inner"), "outer", "second"))
	if got, want := Hints(err), []string{"outer", "second", "inner"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Hints = %q, want %q", got, want)
	}
	if !errors.Is(err, base) {
		t.Error("hints hide the wrapped error")
	}
	if WithHints(nil, "x") != nil {
		t.Error("WithHints(nil) is not nil")
	}
	var fe *FlagError
	if !errors.As(WithHints(FlagErrorf("bad %s", "flag"), "h"), &fe) || fe.Error() != "bad flag" {
		t.Error("a usage error with hints is no longer a usage error")
	}
}

func TestRerunHintIsTheUsersLine(t *testing.T) {
	err := fmt.Errorf("fix: %w", RerunWith(FlagErrorf("--diff needs --dry-run"), "--dry-run"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", "my store", "--diff"}, "run: sessfix fix 'my store' --diff --dry-run"},
		{[]string{"fix", "--diff", "--", "-odd"}, "run: sessfix fix --diff --dry-run -- -odd"},
	} {
		got := RerunHint(err, c.args)
		if h := Hints(got); !reflect.DeepEqual(h, []string{c.want}) {
			t.Errorf("args %q: hints %q, want %q", c.args, h, c.want)
		}
		var fe *FlagError
		if !errors.As(got, &fe) {
			t.Errorf("args %q: no longer a usage error", c.args)
		}
	}
	plain := FlagErrorf("other")
	if got := RerunHint(plain, []string{"fix"}); got != plain || len(Hints(got)) != 0 {
		t.Errorf("an unmarked error changed: %v, hints %q", got, Hints(got))
	}
	if RerunWith(nil, "--x") != nil {
		t.Error("RerunWith(nil) is not nil")
	}
}
