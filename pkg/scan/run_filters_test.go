package scan

import (
	"strings"
	"testing"
)

func TestValidateFiltersRefusesAnEmptySelection(t *testing.T) {
	for _, o := range []Options{
		{Ignore: []string{"SF"}},
		{Select: []string{"SF1"}, Ignore: []string{"SF1"}},
		{Select: []string{"SF103", "SF104"}, Ignore: []string{"SF10"}},
	} {
		err := o.ValidateFilters()
		if err == nil || !strings.Contains(err.Error(), "leaves no rule to run") {
			t.Errorf("ValidateFilters(select %v, ignore %v) = %v, want a selection that leaves no rule refused", o.Select, o.Ignore, err)
		}
	}
	for _, o := range []Options{{}, {Select: []string{"SF1"}, Ignore: []string{"SF103"}}, {Ignore: []string{"SF1"}}} {
		if err := o.ValidateFilters(); err != nil {
			t.Errorf("ValidateFilters(select %v, ignore %v) = %v, want nil", o.Select, o.Ignore, err)
		}
	}
}
