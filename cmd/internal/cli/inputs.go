package cli

import (
	"errors"

	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// FailedInputs lists the inputs an OpenStores error is about, each with
// its error, for the report a command still writes when no input could be
// opened: the named paths (or the stores found) that failed, or else one
// input without a path (nothing found where sessfix looked).
func FailedInputs(err error) []shapes.Failure {
	var ie *shapes.InputsError
	if errors.As(err, &ie) {
		return ie.Failed
	}
	return []shapes.Failure{{Err: err}}
}
