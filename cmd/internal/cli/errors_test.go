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
