package scan_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sessfix/sessfix/internal/opencodetest/storegen"
	"github.com/sessfix/sessfix/pkg/opencode"
	"github.com/sessfix/sessfix/pkg/scan"
	"github.com/sessfix/sessfix/pkg/store"
	"github.com/sessfix/sessfix/pkg/store/shapes"
)

// imageStore is the image-heavy benchmark store: sessions of 48
// messages, each holding 24 PNGs of 512 KiB of base64 (half pasted, half
// returned by the read tool), every one within the limits; each session
// is about 12.5 MB. The benchmark scans it with 12 and with 24 sessions
// (144 and 288 MiB of images): the peaks must not follow.
var imageStore = storegen.Config{Messages: 48, Parts: 5, ToolOutput: 2000, DefectRate: -1, Seed: 5, Images: 24, ImageBytes: 512 << 10}

// BenchmarkScanImages scans the image-heavy stores in the SQLite and the
// sessions (JSON) shape and reports, besides the time, the peak of the
// heap (sampled every millisecond through runtime/metrics) and of the
// process's resident memory (VmHWM, reset before each scan) during a
// scan, next to the store's size and its largest session's: a scan's
// memory must follow the largest session (times the workers), not the
// store. It also reports the peak of the process's anonymous resident
// memory (RssAnon, sampled with the heap): VmHWM also counts the pages of
// the database file the store-health check (quick_check) reads through
// its memory map, the whole file on a SQLite store, which are the
// kernel's page cache, shared and reclaimable; the anonymous peak says
// what the scan itself holds.
//
//	go test -run '^$' -bench ScanImages -benchtime 3x ./pkg/scan
func BenchmarkScanImages(b *testing.B) {
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		for _, sessions := range []int{12, 24} {
			b.Run(fmt.Sprintf("%s/sessions=%d", shape, sessions), func(b *testing.B) { benchScanImages(b, shape, sessions) })
		}
	}
}

func benchScanImages(b *testing.B, shape store.Shape, sessions int) {
	cfg := imageStore
	cfg.Sessions = sessions
	dir := filepath.Join(storegen.BenchDir(), fmt.Sprintf("images-%s-%d", shape, sessions))
	path, st, err := storegen.Cached(shape, dir, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Bytes)
	var peakHeap, peakAnon, peakRSS uint64
	for b.Loop() {
		runtime.GC()
		resetPeakRSS(b)
		stop := sampleMemory()
		res := scanOnce(b, path)
		heap, anon := stop()
		peakHeap, peakAnon, peakRSS = max(peakHeap, heap), max(peakAnon, anon), max(peakRSS, peakRSSBytes(b))
		if got := len(res.Stores[0].Sessions); got != st.Sessions || len(res.Findings) != 0 {
			b.Fatalf("scan saw %d sessions (the store has %d) and reported %d findings (want none)", got, st.Sessions, len(res.Findings))
		}
	}
	if peakAnon == 0 {
		b.Fatal("no RssAnon in /proc/self/status: the anonymous peak cannot be measured here")
	}
	const mb = 1 << 20
	b.ReportMetric(float64(peakHeap)/mb, "peak-heap-MB")
	b.ReportMetric(float64(peakAnon)/mb, "peak-anon-MB")
	b.ReportMetric(float64(peakRSS)/mb, "peak-RSS-MB")
	b.ReportMetric(float64(st.Bytes)/mb, "store-MB")
	b.ReportMetric(float64(st.MaxSessionBytes)/mb, "max-session-MB")
}

// sampleMemory samples the bytes of heap objects (live and not yet swept)
// and the process's anonymous resident memory (RssAnon) every millisecond
// until the returned function is called, which returns the largest sample
// of each.
func sampleMemory() func() (heap, anon uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak, peakAnon uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			peak, peakAnon = max(peak, read()), max(peakAnon, anonBytes())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		return max(peak, read()), max(peakAnon, anonBytes())
	}
}

// statusBytes is a "kB" field of /proc/self/status ("VmHWM:") in bytes;
// ok is false when the file or the field cannot be read.
func statusBytes(field string) (n uint64, ok bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	_, rest, found := bytes.Cut(b, []byte("\n"+field))
	if !found {
		return 0, false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseUint(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	if err != nil {
		return 0, false
	}
	return kb << 10, true
}

// anonBytes is RssAnon, the process's anonymous resident memory, 0 when
// it cannot be read (the benchmark then fails: see benchScanImages).
func anonBytes() uint64 {
	n, _ := statusBytes("RssAnon:")
	return n
}

// resetPeakRSS resets the process's peak resident set size (Linux:
// writing 5 to /proc/self/clear_refs).
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Skipf("cannot reset the peak resident set size here: %v", err)
	}
}

// peakRSSBytes is VmHWM, the process's peak resident set size.
func peakRSSBytes(b *testing.B) uint64 {
	n, ok := statusBytes("VmHWM:")
	if !ok {
		b.Fatal("no VmHWM in /proc/self/status")
	}
	return n
}

// TestScanDecodesNoImageWithinLimits: a scan of a store full of images,
// each within every limit, decodes none of them; it reads the header of
// each image the next request sends, once. It counts decodes through
// opencode.ImageDecodes, not time or bytes, so it does not depend on the
// machine. The generated images' pixels do not even decode: a scan that
// decoded one would also report it.
func TestScanDecodesNoImageWithinLimits(t *testing.T) {
	cfg := storegen.Config{Sessions: 3, Messages: 24, Parts: 4, ToolOutput: 200, DefectRate: -1, Seed: 9, Images: 24, ImageBytes: 8 << 10}
	for _, shape := range []store.Shape{store.ShapeSQLite, store.ShapeSessions} {
		t.Run(string(shape), func(t *testing.T) {
			path, st, err := storegen.Generate(shape, t.TempDir(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if st.Images != cfg.Sessions*cfg.Images {
				t.Fatalf("the store holds %d images, want %d", st.Images, cfg.Sessions*cfg.Images)
			}
			d, err := shapes.Open([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			headers, images := opencode.ImageDecodes()
			res, err := scan.Run(context.Background(), d.Stores, nil)
			if err != nil {
				t.Fatal(err)
			}
			h, i := opencode.ImageDecodes()
			if len(res.Findings) != 0 {
				t.Errorf("scan reports %d findings in a store whose images are within the limits, first %s %s", len(res.Findings), res.Findings[0].Code, res.Findings[0].Message)
			}
			if i != images {
				t.Errorf("scan decoded %d images whole, want none", i-images)
			}
			if h-headers != int64(st.Images) {
				t.Errorf("scan read %d image headers, want one per image: %d", h-headers, st.Images)
			}
		})
	}
}
