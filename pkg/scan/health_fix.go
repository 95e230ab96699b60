package scan

import (
	"context"

	"github.com/sessfix/sessfix/pkg/store"
)

// StoreHealth reads the health of a store that can tell it (a database)
// and runs the enabled store-health rules on it, as Run does: what
// `sessfix fix` plans a database-level repair from. A store that cannot
// tell gives nil, nil. The findings' messages count no sessions (none
// were read).
func StoreHealth(ctx context.Context, st store.Store, opts *Options) (*store.Health, []Finding, error) {
	hc, ok := store.HealthOf(st)
	if !ok || !storeHealthEnabled(opts) {
		return nil, nil, nil
	}
	h, err := hc.Health(ctx, store.HealthOptions{Deep: opts.Deep})
	if err != nil {
		return nil, nil, err
	}
	var out []Finding
	for _, r := range Rules() {
		if r.StoreCheck == nil || !opts.Enabled(r.Code) || r.Code == SF503 {
			continue
		}
		r.StoreCheck(&StoreContext{Info: st.Info(), Health: h, Listed: -1, rule: r, out: &out, activityOf: st.Activity})
	}
	return h, out, nil
}
