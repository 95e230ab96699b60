package fix

// Benchmarks of planning against scanning the same session, on generated
// sessions from a few hundred to thousands of messages and findings.
// docs/performance.md has the numbers:
//
//	go test -run '^$' -bench PlanSession -benchtime 5x ./pkg/fix
//
// The sessions are generated once into $SESSFIX_BENCH_DIR (default
// $TMPDIR/sessfix-bench), as single-session SQLite stores.

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/cpumeter"
	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
)

// planBenchSessions are the sessions planned: the benchmark store's session
// size with a few defects and with a defect on almost every third assistant
// message, then sessions six and twenty times as long (the longest also
// with the benchmark store's defect rate).
var planBenchSessions = []struct {
	messages int
	defects  float64
}{
	{200, 0.02},
	{200, 0.3},
	{1200, 0.3},
	{4000, storegen.Default.DefectRate},
	{4000, 0.3},
}

// BenchmarkPlanSession times, per operation, a scan of one session (load
// and check it, what `sessfix scan` does for each session) and then the
// planning of its repair from that check (what `sessfix fix` adds), and
// reports both and their ratio: plan/scan (wall time) and plan-cpu/scan-cpu
// (process CPU time). one-at-a-time plans by checking each repair alone,
// as planning did before joint verification (the two smaller sessions
// only: it costs findings times a check).
func BenchmarkPlanSession(b *testing.B) {
	for _, c := range planBenchSessions {
		name := fmt.Sprintf("messages=%d,defects=%g", c.messages, c.defects)
		cfg := storegen.Config{Sessions: 1, Messages: c.messages, DefectRate: c.defects}
		b.Run(name+"/joint", func(b *testing.B) { benchPlan(b, cfg, false) })
		if c.messages*int(c.defects*100) <= 1200*30 {
			b.Run(name+"/one-at-a-time", func(b *testing.B) { benchPlan(b, cfg, true) })
		}
	}
}

func benchPlan(b *testing.B, cfg storegen.Config, oneAtATime bool) {
	dir := filepath.Join(storegen.BenchDir(), fmt.Sprintf("plan-%d-%g", cfg.Messages, cfg.DefectRate))
	path, stats, err := storegen.Cached(store.ShapeSQLite, dir, cfg)
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.OpenOne(b, path)
	refs, err := st.List(context.Background())
	if err != nil || len(refs) != 1 {
		b.Fatalf("list %s: %d sessions, %v", path, len(refs), err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	sopts := &scan.Options{Now: clock}
	opts := Options{Now: clock, Scan: sopts, oneAtATime: oneAtATime}
	var scanWall, planWall, scanCPU, planCPU time.Duration
	var p *SessionPlan
	var findings int
	for b.Loop() {
		c0, _ := cpumeter.Process()
		t0 := time.Now()
		s, err := st.Load(context.Background(), refs[0])
		if err != nil {
			b.Fatal(err)
		}
		all := scan.CheckSession(s, sopts)
		c1, _ := cpumeter.Process()
		t1 := time.Now()
		p, err = PlanChecked(s, all, all, opts)
		if err != nil {
			b.Fatal(err)
		}
		c2, _ := cpumeter.Process()
		scanWall, planWall = scanWall+t1.Sub(t0), planWall+time.Since(t1)
		scanCPU, planCPU = scanCPU+c1-c0, planCPU+c2-c1
		findings = len(all)
	}
	// A plan that skipped work would be fast for nothing: every injected
	// defect must be repaired.
	if len(p.Fixed) < stats.DefectCount() {
		b.Fatalf("the plan fixes %d findings, the session has %d injected defects", len(p.Fixed), stats.DefectCount())
	}
	n := float64(b.N)
	b.ReportMetric(float64(findings), "findings")
	b.ReportMetric(float64(scanWall.Microseconds())/1e3/n, "scan-ms/op")
	b.ReportMetric(float64(planWall.Microseconds())/1e3/n, "plan-ms/op")
	b.ReportMetric(float64(planWall)/float64(scanWall), "plan/scan")
	if scanCPU > 0 {
		b.ReportMetric(float64(planCPU)/float64(scanCPU), "plan-cpu/scan-cpu")
	}
}
