package export

import "github.com/sessfix/sessfix/pkg/store"

// Activity: OpenCode prints exports and never writes them back, so nothing
// but sessfix writes an export file, however recently it was written.
func (s *exportStore) Activity() store.Activity { return store.Activity{State: store.ActivityNever} }
