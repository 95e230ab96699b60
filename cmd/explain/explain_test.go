package explain

import (
	"reflect"
	"testing"

	"github.com/sessfix/sessfix/cmd/internal/cli"
	"github.com/sessfix/sessfix/cmd/internal/iostreams"
	"github.com/sessfix/sessfix/pkg/scan"
)

var testRules = []*scan.Rule{
	{Code: "SF101", Name: "empty-message"},
	{Code: "SF103", Name: "thinking-not-first"},
	{Code: "SF104", Name: "empty-text-part"},
	{Code: "SF201", Name: "unreadable-record"},
}

func TestNear(t *testing.T) {
	tests := []struct {
		typed string
		want  []string
	}{
		{"SF13", []string{"SF103", "SF101", "SF104"}},  // one edit from SF103, two from the others
		{"sf1o3", []string{"SF103", "SF101", "SF104"}}, // letter o for zero
		{"empty-text", nil},                            // a name missing its suffix is too far...
		{"thinking-not-frist", []string{"SF103"}},      // ...but a typo in a name is near
		{"SF9", nil},
		{"SF2xx", []string{"SF201"}}, // no close match: same first three characters
	}
	for _, tt := range tests {
		if got := Near(testRules, tt.typed); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Near(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"SF103", "SF103", 0}, {"SF13", "SF103", 1}, {"SF301", "SF103", 2}, {"abc", "", 3}} {
		if got := distance(tt.a, tt.b); got != tt.d {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.d)
		}
	}
}

func TestArgsReachOptions(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	var got *ExplainOptions
	cmd := NewCmdExplain(&cli.Factory{IOStreams: ios}, func(o *ExplainOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"sf103"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Code != "sf103" {
		t.Errorf("Code = %q", got.Code)
	}
}
