// Package pool runs per-session work on a bounded number of goroutines and
// hands the results back in input order. scan.Run and the repair pipeline
// (fix.Pipeline) both run on it.
//
// Guarantees:
//   - At most Workers calls of work run at once; each index is worked on at
//     most once, and in increasing order of start.
//   - emit sees the results in index order, on the goroutine that called
//     Ordered, never two at a time; Progress too, in completion order.
//   - Only results waiting for an earlier one are held: memory follows the
//     slowest item in flight, not the number of items.
//   - Nothing new starts once ctx is done, once a result is marked as the
//     last (Options.Stop), or once emit asks to stop; work already started
//     finishes, and every result before the stop is still emitted.
package pool

import (
	"context"
	"runtime"
)

// Options tune Ordered.
type Options[T any] struct {
	// Workers is the number of goroutines; zero or less means GOMAXPROCS.
	// With one worker the work runs on the calling goroutine, item by item,
	// each emitted before the next starts.
	Workers int
	// Progress, when set, is called after each finished item with the
	// number finished and the total.
	Progress func(done, total int)
	// Stop, when set, marks a result after which no new item starts (a
	// failure that ends the run). The result itself is still emitted.
	Stop func(T) bool
}

// Ordered calls work(ctx, i) for i in [0, n) and emit(i, result) for each
// in order of i. emit returning false stops the run. Ordered returns the
// number of results emitted (the indexes from there on were not emitted)
// and ctx.Err() when the context ended the run early.
func Ordered[T any](ctx context.Context, n int, opts Options[T], work func(ctx context.Context, i int) T, emit func(i int, v T) bool) (int, error) {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		return inline(ctx, n, opts, work, emit)
	}
	type result struct {
		i int
		v T
	}
	jobs := make(chan int)
	results := make(chan result)
	stop := make(chan struct{})
	for range workers {
		go func() {
			for i := range jobs {
				results <- result{i, work(ctx, i)}
			}
		}()
	}
	// The feeder hands out indexes in order until it is told to stop, then
	// says how many it handed out: that many results are waited for.
	started := make(chan int, 1)
	go func() {
		defer close(jobs)
		stopped := func() bool {
			select {
			case <-stop:
				return true
			case <-ctx.Done():
				return true
			default:
				return false
			}
		}
		// A stop or a cancelled context wins over a worker ready for more.
		i := 0
		for ; i < n && !stopped(); i++ {
			select {
			case jobs <- i:
				continue
			case <-stop:
			case <-ctx.Done():
			}
			break
		}
		started <- i
	}()
	halted := false
	halt := func() {
		if !halted {
			halted = true
			close(stop)
		}
	}
	defer halt()
	waiting := map[int]T{}
	emitting := true
	next, finished, total := 0, 0, -1
	for total < 0 || finished < total {
		select {
		case total = <-started:
			continue
		case r := <-results:
			finished++
			if opts.Progress != nil {
				opts.Progress(finished, n)
			}
			if opts.Stop != nil && opts.Stop(r.v) {
				halt()
			}
			if emitting {
				waiting[r.i] = r.v
			}
		}
		for emitting {
			v, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			if !emit(next-1, v) {
				emitting = false
				halt()
				clear(waiting)
			}
		}
	}
	if next < n && emitting {
		return next, ctx.Err()
	}
	return next, nil
}

// inline is Ordered with one worker: no goroutine at all.
func inline[T any](ctx context.Context, n int, opts Options[T], work func(ctx context.Context, i int) T, emit func(i int, v T) bool) (int, error) {
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		v := work(ctx, i)
		if opts.Progress != nil {
			opts.Progress(i+1, n)
		}
		if !emit(i, v) {
			return i + 1, nil
		}
		if opts.Stop != nil && opts.Stop(v) {
			return i + 1, nil
		}
	}
	return n, nil
}
