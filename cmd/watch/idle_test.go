package watch_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/storetest"
	"github.com/sessfix/sessfix/pkg/watch"
)

// idPattern matches OpenCode ids: prefix, 12 hex digits, 14 base62.
var idPattern = regexp.MustCompile(`\b(ses|msg|prt)_([0-9a-f]{12})([0-9A-Za-z]{14})\b`)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// distinct returns n copies of a fixture in which every id is unique
// (the first two base62 digits encode the copy), so they can share one
// SQLite database. Order inside a copy is unchanged.
func distinct(f *storetest.Fixture, n int) []*storetest.Fixture {
	var out []*storetest.Fixture
	for i := 0; i < n; i++ {
		tag := string(base62[i/62%62]) + string(base62[i%62])
		re := func(b []byte) []byte {
			return idPattern.ReplaceAllFunc(b, func(id []byte) []byte {
				m := idPattern.FindSubmatch(id)
				return []byte(string(m[1]) + "_" + string(m[2]) + tag + string(m[3][2:]))
			})
		}
		res := func(s string) string { return string(re([]byte(s))) }
		c := &storetest.Fixture{ID: res(f.ID), Title: fmt.Sprintf("idle %d", i), Info: re(f.Info)}
		for _, m := range f.Messages {
			cm := storetest.Message{ID: res(m.ID), Body: re(m.Body)}
			for _, p := range m.Parts {
				cm.Parts = append(cm.Parts, storetest.Part{ID: res(p.ID), Body: re(p.Body)})
			}
			c.Messages = append(c.Messages, cm)
		}
		out = append(out, c)
	}
	return out
}

// cpuTicks reads utime+stime (clock ticks) and the resident set (pages) of
// a process from /proc/<pid>/stat.
func cpuTicks(pid int) (ticks, rssPages int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	ut, _ := strconv.ParseInt(f[11], 10, 64)                 // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)                 // field 15
	rss, _ := strconv.ParseInt(f[21], 10, 64)                // field 24
	return ut + st, rss, nil
}

var idleStores = map[store.Shape]string{}

// BenchmarkIdleCPU measures what an idle `sessfix watch` costs: it starts
// watch on a store of 3000 healthy sessions, waits for the initial scan,
// then reads the process's CPU time across b.N seconds of idleness. Run it
// for a minute with:
//
//	go test ./cmd/watch -run '^$' -bench IdleCPU -benchtime 60x
//
// Reported: cpu-ms (CPU time used while idle), cpu-% of one core, and the
// resident set in MiB.
func BenchmarkIdleCPU(b *testing.B) {
	const sessions = 3000
	healthy, err := storetest.LoadExportFixture(fixtures + "tool-loop-negative/session.json")
	if err != nil {
		b.Fatal(err)
	}
	fs := distinct(healthy, sessions)
	dir := b.TempDir()
	for _, shape := range []store.Shape{store.ShapeSessions, store.ShapeSQLite} {
		b.Run(string(shape), func(b *testing.B) {
			// The benchmark function runs more than once; build each store once.
			path, ok := idleStores[shape]
			if !ok {
				t0 := time.Now()
				path = storetest.Materialize(b, shape, filepath.Join(dir, string(shape)), fs...)
				idleStores[shape] = path
				b.Logf("%s store of %d sessions written in %s", shape, sessions, time.Since(t0).Round(time.Millisecond))
			}
			t0 := time.Now()
			p := startWatch(b, b.TempDir(), path)
			deadline := time.Now().Add(5 * time.Minute)
			for len(p.all(watch.Checked, "")) < sessions {
				if time.Now().After(deadline) {
					b.Fatalf("initial scan did not finish: %d of %d sessions checked", len(p.all(watch.Checked, "")), sessions)
				}
				time.Sleep(100 * time.Millisecond)
			}
			b.Logf("initial scan of %d sessions took %s", sessions, time.Since(t0).Round(time.Millisecond))
			time.Sleep(time.Second) // let the last repairs' writes and the GC settle
			pid := p.cmd.Process.Pid
			before, _, err := cpuTicks(pid)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				time.Sleep(time.Second)
			}
			b.StopTimer()
			elapsed := time.Since(start)
			after, rss, err := cpuTicks(pid)
			if err != nil {
				b.Fatal(err)
			}
			const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
			cpu := time.Duration(after-before) * tick
			b.ReportMetric(float64(cpu.Milliseconds()), "cpu-ms")
			b.ReportMetric(100*cpu.Seconds()/elapsed.Seconds(), "cpu-%")
			b.ReportMetric(float64(rss*int64(os.Getpagesize()))/(1<<20), "rss-MiB")
			b.ReportMetric(0, "ns/op")
		})
	}
}
