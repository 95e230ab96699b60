package pool

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// jitter makes later items often finish before earlier ones.
func jitter(i int) { time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond) }

func TestOrderedEmitsInInputOrder(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 8} {
		var got []int
		var progress []int
		n, err := Ordered(context.Background(), 200, Options[int]{Workers: workers, Progress: func(done, total int) {
			if total != 200 {
				t.Errorf("total %d", total)
			}
			progress = append(progress, done)
		}}, func(_ context.Context, i int) int { jitter(i); return i * i }, func(i, v int) bool {
			if v != i*i {
				t.Errorf("emit(%d, %d): result of another item", i, v)
			}
			got = append(got, i)
			return true
		})
		if err != nil || n != 200 {
			t.Fatalf("workers %d: n %d, err %v", workers, n, err)
		}
		if !slices.IsSorted(got) || len(got) != 200 {
			t.Errorf("workers %d: emitted out of order or not all: %v", workers, got)
		}
		if len(progress) != 200 || !slices.IsSorted(progress) || progress[199] != 200 {
			t.Errorf("workers %d: progress %v", workers, progress)
		}
	}
}

// TestOrderedBoundsConcurrency: with 3 workers exactly 3 items run at
// once. The first items wait until 3 are running (the minute is only a
// guard against a pool that never runs 3), so the count reached does not
// depend on how the scheduler interleaves them.
func TestOrderedBoundsConcurrency(t *testing.T) {
	var running, most atomic.Int64
	three := make(chan struct{})
	var once sync.Once
	_, err := Ordered(context.Background(), 100, Options[int]{Workers: 3}, func(_ context.Context, i int) int {
		r := running.Add(1)
		for {
			m := most.Load()
			if r <= m || most.CompareAndSwap(m, r) {
				break
			}
		}
		if r == 3 {
			once.Do(func() { close(three) })
		}
		select {
		case <-three:
		case <-time.After(time.Minute):
		}
		running.Add(-1)
		return i
	}, func(int, int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m != 3 {
		t.Errorf("at most %d items ran at once, want 3", m)
	}
}

// TestOrderedStopsAfterAFailure: once a result is marked as the last, no
// new item starts, and everything started is still emitted in order.
func TestOrderedStopsAfterAFailure(t *testing.T) {
	for _, workers := range []int{1, 4} {
		var startedMax atomic.Int64
		var got []int
		atStop := int64(-1)
		n, err := Ordered(context.Background(), 1000, Options[int]{Workers: workers, Stop: func(v int) bool {
			if v == 10 {
				atStop = startedMax.Load()
			}
			return v == 10
		}},
			func(_ context.Context, i int) int {
				for {
					m := startedMax.Load()
					if int64(i) <= m || startedMax.CompareAndSwap(m, int64(i)) {
						break
					}
				}
				jitter(i)
				return i
			}, func(i, v int) bool { got = append(got, i); return true })
		if err != nil {
			t.Fatal(err)
		}
		// Workers that had taken an item may not have marked it yet, and
		// the feeder may be handing one out as the stop comes.
		if m := startedMax.Load(); m > atStop+int64(workers)+1 {
			t.Errorf("workers %d: item %d started after item 10 stopped the run (%d had started then)", workers, m, atStop)
		}
		if n != len(got) || n < 11 || !slices.IsSorted(got) || got[len(got)-1] != n-1 {
			t.Errorf("workers %d: emitted %v (n %d), want 0..10 and what had started", workers, got, n)
		}
	}
}

func TestOrderedEmitCanStop(t *testing.T) {
	for _, workers := range []int{1, 4} {
		var got []int
		n, err := Ordered(context.Background(), 100, Options[int]{Workers: workers},
			func(_ context.Context, i int) int { jitter(i); return i },
			func(i, v int) bool { got = append(got, i); return i < 5 })
		if err != nil || n != 6 || !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
			t.Errorf("workers %d: n %d err %v emitted %v, want 0..5", workers, n, err, got)
		}
	}
}

func TestOrderedCancelled(t *testing.T) {
	for _, workers := range []int{1, 4} {
		ctx, cancel := context.WithCancel(context.Background())
		var got []int
		n, err := Ordered(ctx, 1000, Options[int]{Workers: workers}, func(ctx context.Context, i int) int {
			if i == 20 {
				cancel()
			}
			jitter(i)
			return i
		}, func(i, v int) bool { got = append(got, i); return true })
		if err != context.Canceled {
			t.Errorf("workers %d: err %v, want context.Canceled", workers, err)
		}
		if n < 21 || n > 22+workers || n != len(got) || !slices.IsSorted(got) {
			t.Errorf("workers %d: emitted %d items %v after cancelling at 20", workers, n, got)
		}
	}
}
