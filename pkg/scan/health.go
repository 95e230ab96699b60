package scan

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/sessfix/sessfix/internal/plural"
	"github.com/sessfix/sessfix/pkg/store"
)

// DefaultOversized is the part data size at and above which SF503 reports
// a part row: 50 MiB, where OpenCode, which reads every part of a session
// into memory and parses it, runs short of memory (a 308 MB base64 PDF
// stops it at start).
const DefaultOversized = 50 << 20

// StoreContext is what a store-health rule (SF5xx) sees: one database's
// health and how many of its sessions could be read.
type StoreContext struct {
	Info   store.Info
	Health *store.Health
	// Listed and Readable count the store's sessions: listed, and loaded
	// without an error; Listed is -1 when none were read (StoreHealth).
	Listed, Readable int
	// Oversized is the part data size SF503 reports at and above.
	Oversized  int64
	rule       *Rule
	out        *[]Finding
	activityOf func() store.Activity
}

// Report adds a store finding for the current rule, located at the
// database file unless f says otherwise. A fixable store-health rule's
// findings name its repair (`sessfix fix` makes it on the database as a
// whole, pkg/fix's dbrepair.go); the others are report-only.
func (c *StoreContext) Report(f Finding) {
	r := c.rule
	f.Code, f.Rule = r.Code, r.Name
	if f.Severity == 0 {
		f.Severity = r.Severity
	}
	f.Fix = ""
	if r.Fixable && c.Info.Shape == store.ShapeSQLite {
		// fix repairs a 1.x database; an OpenCode 2 one it never writes.
		f.Fix = r.Fix
	}
	if f.Location.Path == "" {
		f.Location = store.Location{Path: c.Info.Path}
	}
	f.Store, f.StorePath, f.Shape = c.Info, c.Info.Path, c.Info.Shape
	*c.out = append(*c.out, f)
}

// storeHealthEnabled reports whether any store-health rule runs.
func storeHealthEnabled(opts *Options) bool {
	for _, r := range registry {
		if r.StoreCheck != nil && opts.Enabled(r.Code) {
			return true
		}
	}
	return false
}

// storeHealth reads the health of a store that can tell it, for the
// enabled store-health rules; nil, nil for a store that cannot tell (the
// JSON shapes, an export file) or when no such rule runs. The threshold
// SF503 reports at is returned with it. With fromRows, the oversized part
// rows are left to the caller, which measures them on the rows it loads
// (oversizedIn) instead of reading the part table once more.
func storeHealth(ctx context.Context, st store.Store, opts *Options, fromRows bool) (*store.Health, int64, error) {
	hc, ok := store.HealthOf(st)
	if !ok || !storeHealthEnabled(opts) {
		return nil, 0, nil
	}
	limit := oversizedLimit(opts)
	query := limit
	if fromRows {
		query = 0
	}
	h, err := hc.Health(ctx, store.HealthOptions{Deep: opts.Deep, Oversized: query})
	if err != nil {
		return nil, 0, err
	}
	return h, limit, nil
}

// oversizedLimit is the part data size SF503 reports at and above; 0 when
// SF503 does not run.
func oversizedLimit(opts *Options) int64 {
	if !opts.Enabled(SF503) {
		return 0
	}
	return cmp.Or(opts.Oversized, DefaultOversized)
}

// oversizedIn lists the parts of a session loaded from a database whose
// data is at least limit bytes (SF503), as the health check's query would:
// the data column's length is the part's raw bytes.
func oversizedIn(s *store.Session, limit int64) []store.Oversized {
	if limit <= 0 || s.Store.Shape != store.ShapeSQLite {
		return nil
	}
	var out []store.Oversized
	add := func(messageID string, p *store.Part) {
		if n := int64(len(p.Raw)); n >= limit {
			out = append(out, store.Oversized{SessionID: s.ID, MessageID: messageID, PartID: p.ID, Bytes: n, Loc: p.Loc})
		}
	}
	for _, m := range s.Messages {
		for _, p := range m.Parts {
			add(m.ID, p)
		}
	}
	for _, p := range s.Orphans {
		add(p.MessageID, p)
	}
	for _, r := range s.Broken {
		if n := int64(len(r.Raw)); r.Kind == store.KindPart && n >= limit {
			out = append(out, store.Oversized{SessionID: s.ID, MessageID: r.Parent, PartID: r.ID, Bytes: n, Loc: r.Loc})
		}
	}
	return out
}

// sortOversized orders oversized parts as the health check's query does:
// largest first, then by part id.
func sortOversized(o []store.Oversized) {
	slices.SortFunc(o, func(a, b store.Oversized) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.PartID, b.PartID))
	})
}

// checkStoreHealth runs the enabled store-health rules on h, the health
// storeHealth read (nothing when it is nil).
func checkStoreHealth(st store.Store, h *store.Health, limit int64, listed, readable int, opts *Options) []Finding {
	if h == nil {
		return nil
	}
	var out []Finding
	for _, r := range Rules() {
		if r.StoreCheck == nil || !opts.Enabled(r.Code) {
			continue
		}
		r.StoreCheck(&StoreContext{Info: st.Info(), Health: h, Listed: listed, Readable: readable, Oversized: limit, rule: r, out: &out, activityOf: st.Activity})
	}
	return out
}

// readableNote is the store note of a JSON store some of whose sessions
// or records could not be read: how much of it could.
func readableNote(listed, readable, broken int) string {
	return fmt.Sprintf("%d of %s readable; %s unreadable (SF201)", readable,
		plural.Count(listed, "session", "sessions"), plural.Count(broken, "record", "records"))
}

// mib renders a size in MiB, for messages.
func mib(n int64) string {
	if n < 1<<20 {
		return plural.Count(int(n), "byte", "bytes")
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// activity is what the store sees of other programs using it, when the
// store can tell.
func (c *StoreContext) activity() (store.ActivityState, bool) {
	if c.activityOf == nil {
		return store.ActivityUnknown, false
	}
	return c.activityOf().State, true
}

// reportsDamage reports whether fs holds an SF501 finding.
func reportsDamage(fs []Finding) bool {
	for _, f := range fs {
		if f.Code == SF501 {
			return true
		}
	}
	return false
}
