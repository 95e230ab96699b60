package scan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sessfix/sessfix/internal/pool"
	"github.com/sessfix/sessfix/pkg/ocenv"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/store"
)

// Options configure a scan.
type Options struct {
	// Select and Ignore filter rules by code or code prefix ("SF1", "SF203").
	Select, Ignore []string
	// Sessions limits the scan to these session ids (empty: all).
	Sessions []string
	// Settle, Abandon and Activity make the settle policy (Policy) that
	// tells an unfinished message OpenCode is still writing from an
	// abandoned one: see SettlePolicy's fields. Run sets Activity to ask
	// its stores when it is nil.
	Settle, Abandon time.Duration
	Activity        func(store.Info) store.Activity
	// Now is the clock (tests inject it). Nil means time.Now.
	Now func() time.Time
	// Workers loading and checking sessions concurrently; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called after each session with the count done
	// and the total known so far. Calls come from one goroutine at a time.
	Progress func(done, total int)
	// OpenCode reads what OpenCode reads outside its data dir (config
	// files, the models catalogue) for SF213; nil: SF213 checks nothing.
	OpenCode *ocenv.Resolver
	// Deep runs SQLite's full integrity_check on each database for SF501
	// instead of quick_check.
	Deep bool
	// Oversized is SF503's threshold in bytes; 0 means DefaultOversized.
	Oversized int64
}

// ReadPackages gives s the AI SDK packages the user's OpenCode config and
// models catalogue name for its models (store.Session.Packages: how
// pkg/sent tells the family of a provider the user added), when o reads
// OpenCode's environment (OpenCode set) and s has none yet. CheckSession
// and Diagnose call it; a caller that builds a request of a session it
// did not check calls it first. A config OpenCode would refuse leaves s
// without (SF213 reports it).
func (o *Options) ReadPackages(s *store.Session) {
	if o == nil || o.OpenCode == nil || s == nil || s.Packages != nil {
		return
	}
	dir := ""
	if s.Info != nil {
		dir = s.Info.Get("directory").Str
	}
	if ms, err := o.OpenCode.Models(dir); err == nil {
		s.Packages = ms
	}
}

func (o *Options) now() time.Time {
	if o == nil || o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Policy returns the settle policy the scan judges sessions in progress
// by.
func (o *Options) Policy() opencode.SettlePolicy {
	if o == nil {
		return opencode.SettlePolicy{}
	}
	return opencode.SettlePolicy{Settle: o.Settle, Abandon: o.Abandon, Activity: o.Activity}
}

// IgnoringUse returns a copy of o whose settle policy calls no session in
// use: no settle or abandon window, and no other program using the store.
// The rules then report an unfinished newest turn as abandoned (SF301), as
// they will once OpenCode is done with it.
func (o *Options) IgnoringUse() *Options {
	c := Options{}
	if o != nil {
		c = *o
	}
	c.Settle, c.Abandon = opencode.NoSettle, opencode.NoAbandon
	c.Activity = func(store.Info) store.Activity { return store.Activity{State: store.ActivityNone} }
	return &c
}

// ValidateFilters reports unknown codes or prefixes in Select/Ignore, and
// a selection that leaves no rule to run (every selected rule ignored).
func (o *Options) ValidateFilters() error {
	for _, list := range [][]string{o.Select, o.Ignore} {
		for _, sel := range list {
			if !matchesAny(sel) {
				return fmt.Errorf("unknown rule code or prefix %q (see `sessfix rules`)", sel)
			}
		}
	}
	for _, r := range registry {
		if o.Enabled(r.Code) {
			return nil
		}
	}
	return fmt.Errorf("the rule selection (%s) leaves no rule to run", o.describeFilters())
}

// describeFilters names the filters as flags: "--select SF1 --ignore SF1".
func (o *Options) describeFilters() string {
	var parts []string
	if len(o.Select) > 0 {
		parts = append(parts, "--select "+strings.Join(o.Select, ","))
	}
	if len(o.Ignore) > 0 {
		parts = append(parts, "--ignore "+strings.Join(o.Ignore, ","))
	}
	return strings.Join(parts, " ")
}

func matchesAny(sel string) bool {
	for _, r := range registry {
		if hasPrefixFold(r.Code, sel) {
			return true
		}
	}
	return false
}

func hasPrefixFold(code, prefix string) bool {
	return len(code) >= len(prefix) && strings.EqualFold(code[:len(prefix)], prefix)
}

// Enabled reports whether the options select the rule code.
func (o *Options) Enabled(code string) bool {
	if o == nil {
		return true
	}
	if len(o.Select) > 0 {
		ok := false
		for _, s := range o.Select {
			if hasPrefixFold(code, s) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	for _, s := range o.Ignore {
		if hasPrefixFold(code, s) {
			return false
		}
	}
	return true
}

// CheckSession runs every enabled rule over one loaded session and returns
// its findings in a stable order (message order, part order, code). A
// record-rule finding about the same defect as a preflight finding is
// dropped; the preflight finding names it in FixedBy (see dedupePreflight).
// Record rules about Anthropic's rules are left out for models of another
// family (deferToFamily).
func CheckSession(s *store.Session, opts *Options) []Finding {
	out, _ := checkSession(s, opts)
	return out
}

// checkSession is CheckSession, also returning what the rules computed about
// the session together.
func checkSession(s *store.Session, opts *Options) ([]Finding, *Context) {
	if opts == nil {
		opts = &Options{}
	}
	opts.ReadPackages(s)
	oc := s.OpenCode2
	if oc == nil || !oc.V2 {
		return checkRules(s, opts, func(*Rule) bool { return true })
	}
	// An OpenCode 2 session: the SF4xx rules read its rows, the 1.x rules
	// its 1.x copy (see opencode2.go).
	out, c := checkRules(s, opts, func(r *Rule) bool { return r.OpenCode2 })
	if oc.V1 != nil {
		v1, _ := checkRules(oc.V1, opts, func(r *Rule) bool { return !r.OpenCode2 })
		out = append(out, copyFindings(s, v1)...)
	}
	return out, c
}

// checkRules runs the enabled rules that which selects on s.
func checkRules(s *store.Session, opts *Options, which func(*Rule) bool) ([]Finding, *Context) {
	var out []Finding
	cache := &sessionCache{}
	for _, r := range runOrder() {
		if !opts.Enabled(r.Code) || r.Check == nil || !which(r) {
			continue
		}
		c := &Context{Session: s, Opts: opts, rule: r, out: &out, cache: cache}
		r.Check(c)
	}
	out = dedupePreflight(deferToFamily(s, out))
	sortFindings(s, out)
	return out, &Context{Session: s, Opts: opts, cache: cache}
}

func sortFindings(s *store.Session, fs []Finding) {
	if len(fs) < 2 {
		return
	}
	// Positions of the records the findings name, not of the whole session.
	named := make(map[string]bool, 2*len(fs))
	for _, f := range fs {
		named[f.MessageID] = true
		named[f.PartID] = true
	}
	pos := make(map[string]int, len(named))
	i := 0
	for _, m := range s.Messages {
		i++
		if named[m.ID] {
			pos[m.ID] = i * 100000
		}
		for j, p := range m.Parts {
			if named[p.ID] {
				pos[p.ID] = i*100000 + j + 1
			}
		}
	}
	key := func(f Finding) int {
		if f.PartID != "" {
			if v, ok := pos[f.PartID]; ok {
				return v
			}
		}
		if v, ok := pos[f.MessageID]; ok {
			return v
		}
		return 0
	}
	sort.SliceStable(fs, func(a, b int) bool {
		ka, kb := key(fs[a]), key(fs[b])
		if ka != kb {
			return ka < kb
		}
		if fs[a].Code != fs[b].Code {
			return fs[a].Code < fs[b].Code
		}
		if fs[a].PartID != fs[b].PartID {
			return fs[a].PartID < fs[b].PartID
		}
		return fs[a].Location.String() < fs[b].Location.String()
	})
}

// SessionSummary describes one scanned session.
type SessionSummary struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Messages int    `json:"messages"`
	Parts    int    `json:"parts"`
	Findings int    `json:"findings"`
	// InUse says why the settle policy holds the session's unfinished turn
	// as one OpenCode may still be writing, which the rules then leave
	// unchecked; "" when it does not.
	InUse string `json:"in_use,omitempty"`
	// Override names the flags that check such a turn anyway.
	Override string `json:"-"`
}

// StoreResult is one store's part of a scan.
type StoreResult struct {
	Info     store.Info       `json:"info"`
	Sessions []SessionSummary `json:"sessions"`
	// Err is set when the store could not be listed as a whole.
	Err error `json:"-"`
}

// Result is a whole scan. Findings are ordered by store (in the order given),
// then session id (a store's own findings, about no session, first), then
// position in the session; a store-health finding about a session's part
// (SF503) leads that session's findings.
type Result struct {
	Stores   []StoreResult
	Findings []Finding
}

// Run scans every session of the stores. Sessions are loaded and checked by
// Workers goroutines (internal/pool); each session is dropped once checked,
// so memory stays bounded by the largest sessions in flight. A session that
// fails to load is reported as a finding (SF201) rather than aborting the
// scan.
func Run(ctx context.Context, stores []store.Store, opts *Options) (*Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	if opts.Activity == nil {
		o := *opts
		o.Activity = opencode.StoreActivity(stores)
		opts = &o
	}
	res := &Result{}
	type job struct {
		si  int
		ref store.SessionRef
	}
	type done struct {
		summary  SessionSummary
		findings []Finding
		failed   bool // the session could not be loaded
		broken   int  // its unreadable records
		// oversized are its part rows at or above SF503's threshold,
		// measured on the rows loaded (oversizedIn).
		oversized []store.Oversized
	}
	var jobs []job
	for si, st := range stores {
		sr := StoreResult{Info: st.Info(), Sessions: []SessionSummary{}}
		refs, err := st.List(ctx)
		if err != nil {
			sr.Err = err
		}
		for _, ref := range refs {
			if len(opts.Sessions) > 0 && !slices.Contains(opts.Sessions, ref.ID) {
				continue
			}
			jobs = append(jobs, job{si, ref})
		}
		res.Stores = append(res.Stores, sr)
	}
	perStore := make([][]done, len(stores))
	// A scan of every session loads every part row (a part whose message
	// is gone with its session's orphans): SF503 measures them as they are
	// loaded instead of the health check reading the part table again.
	limit := oversizedLimit(opts)
	fromRows := len(opts.Sessions) == 0
	if !fromRows {
		limit = 0
	}
	check := func(ctx context.Context, i int) done {
		j := jobs[i]
		st := stores[j.si]
		s, err := st.Load(ctx, j.ref)
		failed := err != nil
		if err != nil {
			s = &store.Session{Store: st.Info(), ID: j.ref.ID, Title: j.ref.Title}
			s.Broken = append(s.Broken, &store.Record{Kind: store.KindSession, ID: j.ref.ID, Loc: store.Location{Path: st.Info().Path}, Err: err})
		}
		fs, c := checkSession(s, opts)
		sum := SessionSummary{ID: s.ID, Title: s.Title, Messages: len(s.Messages), Parts: s.PartCount(), Findings: len(fs)}
		if u := InUse(c); u.InUse {
			sum.InUse, sum.Override = u.Why, "--settle 0 --abandon 0"
			if u.Watching {
				sum.Override = "--abandon 0"
			}
		}
		return done{sum, fs, failed, len(s.Broken), oversizedIn(s, limit)}
	}
	collect := func(i int, d done) bool {
		si := jobs[i].si
		perStore[si] = append(perStore[si], d)
		return true
	}
	// The store-health checks read each database once more, in one query
	// each (SF501's check): with more than one worker they run next to the
	// sessions, so that no core waits for them at the end.
	type healthResult struct {
		h     *store.Health
		limit int64
		err   error
	}
	healths := make([]healthResult, len(stores))
	readHealth := func(si int) {
		h, limit, err := storeHealth(ctx, stores[si], opts, fromRows)
		healths[si] = healthResult{h, limit, err}
	}
	var wg sync.WaitGroup
	concurrent := cmp.Or(opts.Workers, runtime.GOMAXPROCS(0)) > 1 && len(jobs) > 1
	if concurrent {
		wg.Go(func() {
			for si := range stores {
				readHealth(si)
			}
		})
	}
	_, _ = pool.Ordered(ctx, len(jobs), pool.Options[done]{Workers: opts.Workers, Progress: opts.Progress}, check, collect)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for si := range perStore {
		// What reading the sessions found about the store (sessfix's
		// leftover temporary files, say) is in its Info now.
		res.Stores[si].Info = stores[si].Info()
		res.Stores[si].Info.Notes = slices.Clip(res.Stores[si].Info.Notes)
		ds := perStore[si]
		sort.Slice(ds, func(a, b int) bool { return ds[a].summary.ID < ds[b].summary.ID })
		readable, broken := 0, 0
		for _, d := range ds {
			if !d.failed {
				readable++
			}
			broken += d.broken
		}
		if !concurrent {
			readHealth(si)
		}
		hr := healths[si]
		if fromRows && hr.limit > 0 && hr.h != nil && !hr.h.Damaged() {
			var big []store.Oversized
			failed := false
			for _, d := range ds {
				big = append(big, d.oversized...)
				failed = failed || d.failed
			}
			if failed {
				// Some rows were not loaded, so not measured: the
				// health check measures the part table itself.
				h, _, err := storeHealth(ctx, stores[si], opts, false)
				if err != nil && hr.err == nil {
					hr.err = err
				}
				if h != nil {
					big = h.Oversized
				}
			}
			sortOversized(big)
			hr.h.Oversized = big
		}
		health := checkStoreHealth(stores[si], hr.h, hr.limit, len(ds), readable, opts)
		if hr.err != nil && res.Stores[si].Err == nil {
			res.Stores[si].Err = hr.err
		}
		if reportsDamage(health) && errors.As(res.Stores[si].Err, new(*store.DamagedError)) {
			// A database SQL cannot open lists nothing: SF501 says so.
			res.Stores[si].Err = nil
		}
		if _, ok := store.HealthOf(stores[si]); !ok && broken > 0 {
			res.Stores[si].Info.Notes = append(res.Stores[si].Info.Notes, readableNote(len(ds), readable, broken))
		}
		found := health
		for _, d := range ds {
			res.Stores[si].Sessions = append(res.Stores[si].Sessions, d.summary)
			found = append(found, d.findings...)
			if d.summary.InUse != "" {
				res.Stores[si].Info.Notes = append(res.Stores[si].Info.Notes, InUseNote(d.summary))
			}
		}
		// The store's own findings first, then each session's: a
		// store-health finding about a part (SF503) goes with its session.
		sort.SliceStable(found, func(a, b int) bool { return found[a].SessionID < found[b].SessionID })
		res.Findings = append(res.Findings, found...)
	}
	return res, nil
}

// InUseNote is the store note about a session whose unfinished turn the
// scan left unchecked (SessionSummary.InUse): which, why, and the flags
// that check it anyway.
func InUseNote(s SessionSummary) string {
	return fmt.Sprintf("session %s skipped: %s, so OpenCode may still be writing it and its unfinished turn was not checked; add %s to check it anyway", s.ID, s.InUse, s.Override)
}
