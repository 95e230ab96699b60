package surgery

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/sessfix/sessfix/internal/pool"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/sent"
	"github.com/sessfix/sessfix/pkg/store"
)

// Summary is one session as `sessfix sessions` lists it.
type Summary struct {
	Store store.Info
	ID    string
	Title string
	// Directory is where OpenCode ran the session; Project its project id;
	// ParentID the session a child (subagent) session belongs to.
	Directory, Project, ParentID string
	// ProviderID and ModelID are the model the next prompt goes to
	// (sent.CurrentModel).
	ProviderID, ModelID string
	Messages, Parts     int
	// LastActivity is the newest time OpenCode wrote into the records
	// (opencode.LastActivity); when the records carry none, the newest
	// modification of a record.
	LastActivity time.Time
	Health       Health
}

// Health is a session's state as a glance: findings by severity, whether
// it may be in use, whether it could be loaded at all.
type Health struct {
	// Busy is set when the settle policy says OpenCode may still be
	// writing the session (opencode.SettlePolicy.Check: its newest assistant
	// message is unfinished and it changed within the settle window, or
	// another program has the store open within the abandon window), and
	// drop, rewind and fork leave it alone unless forced.
	Busy bool
	// Errors, Warnings and Infos count the findings.
	Errors, Warnings, Infos int
	// Err is why the session could not be loaded.
	Err error
}

// State names the health in one word: "unreadable", "busy", "errors",
// "warnings", "info" or "clean".
func (h Health) State() string {
	switch {
	case h.Err != nil:
		return "unreadable"
	case h.Busy:
		return "busy"
	case h.Errors > 0:
		return "errors"
	case h.Warnings > 0:
		return "warnings"
	case h.Infos > 0:
		return "info"
	}
	return "clean"
}

// ListOptions configure List.
type ListOptions struct {
	// Scan holds the settle window, the clock, the workers and the session
	// filter; the rule filters are ignored (health counts every rule).
	Scan *scan.Options
}

// StoreStatus is one store List looked at: its sessions were listed, or
// Err says why not.
type StoreStatus struct {
	Info store.Info
	Err  error
}

// Listing is what List found.
type Listing struct {
	// Stores are the stores in the order given.
	Stores []StoreStatus
	// Sessions are newest first.
	Sessions []Summary
}

// Failed counts the stores that could not be listed.
func (l *Listing) Failed() int {
	n := 0
	for _, st := range l.Stores {
		if st.Err != nil {
			n++
		}
	}
	return n
}

// List loads and checks every session of the stores, newest first (by
// LastActivity, then id); a store that cannot be listed is reported in
// the Listing and the others are still listed. Sessions are loaded on internal/pool's ordered workers, one
// at a time per worker: memory follows the largest sessions in flight.
func List(ctx context.Context, stores []store.Store, opts ListOptions) (*Listing, error) {
	sopts := scan.Options{}
	if opts.Scan != nil {
		sopts = *opts.Scan
	}
	sopts.Select, sopts.Ignore = nil, nil
	if sopts.Activity == nil {
		sopts.Activity = opencode.StoreActivity(stores)
	}
	policy := sopts.Policy()
	now := time.Now
	if sopts.Now != nil {
		now = sopts.Now
	}
	type job struct {
		st  store.Store
		ref store.SessionRef
	}
	var jobs []job
	l := &Listing{}
	for _, st := range stores {
		refs, err := st.List(ctx)
		l.Stores = append(l.Stores, StoreStatus{Info: st.Info(), Err: err})
		if err != nil {
			continue
		}
		for _, ref := range refs {
			if len(sopts.Sessions) == 0 || slices.Contains(sopts.Sessions, ref.ID) {
				jobs = append(jobs, job{st, ref})
			}
		}
	}
	out := make([]Summary, 0, len(jobs))
	work := func(ctx context.Context, i int) Summary {
		j := jobs[i]
		s, err := j.st.Load(ctx, j.ref)
		if err != nil {
			return Summary{Store: j.st.Info(), ID: j.ref.ID, Title: j.ref.Title, LastActivity: j.ref.Updated, Health: Health{Err: err}}
		}
		return summarize(s, &sopts, policy, now())
	}
	emit := func(_ int, sum Summary) bool {
		out = append(out, sum)
		return true
	}
	if _, err := pool.Ordered(ctx, len(jobs), pool.Options[Summary]{Workers: sopts.Workers, Progress: sopts.Progress}, work, emit); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].LastActivity.Equal(out[b].LastActivity) {
			return out[a].LastActivity.After(out[b].LastActivity)
		}
		return out[a].ID < out[b].ID
	})
	l.Sessions = out
	return l, nil
}

// summarize describes one loaded session.
func summarize(s *store.Session, sopts *scan.Options, policy opencode.SettlePolicy, now time.Time) Summary {
	sum := Summary{
		Store: s.Store, ID: s.ID, Title: s.Title,
		Directory: get(s, fDirectory).String(), Project: get(s, fProject).String(), ParentID: get(s, fParent).String(),
		Messages: len(s.Messages), Parts: s.PartCount(),
	}
	sum.ProviderID, sum.ModelID = sent.CurrentModel(s)
	sum.LastActivity = opencode.LastActivity(s)
	if sum.LastActivity.IsZero() {
		sum.LastActivity = s.LastModified()
	}
	sum.Health.Busy = policy.Check(s, now).InUse
	for _, f := range scan.CheckSession(s, sopts) {
		switch f.Severity {
		case scan.Error:
			sum.Health.Errors++
		case scan.Warning:
			sum.Health.Warnings++
		default:
			sum.Health.Infos++
		}
	}
	return sum
}
