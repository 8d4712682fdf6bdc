package dispatch

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The deliverers run every job, never more than deliverParallel at once, and keep the
// goroutines they started: jobs handed out one after another reuse one goroutine rather than
// starting one each.
func TestDeliverersReuseAndBound(t *testing.T) {
	p := newDeliverers()
	var wg sync.WaitGroup
	for range 1000 { // one at a time: the first deliverer takes every job
		wg.Add(1)
		done := make(chan struct{})
		p.run(func() { wg.Done(); close(done) })
		<-done
		time.Sleep(10 * time.Microsecond) // room to get back to waiting for the next
	}
	wg.Wait()
	if p.started > 4 { // a deliverer not back in time has the next job go to another
		t.Errorf("1000 jobs one after another started %d goroutines, want them reused", p.started)
	}

	var running, most atomic.Int32
	release := make(chan struct{})
	n := 3 * deliverParallel
	wg.Add(n)
	go func() {
		for range n {
			p.run(func() {
				defer wg.Done()
				now := running.Add(1)
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
				<-release
				running.Add(-1)
			})
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for running.Load() < deliverParallel && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := running.Load(); got != deliverParallel {
		t.Fatalf("%d jobs running with %d handed out, want %d", got, n, deliverParallel)
	}
	close(release)
	wg.Wait()
	p.stop()
	if m := most.Load(); m != deliverParallel {
		t.Errorf("at most %d jobs ran at once, want %d", m, deliverParallel)
	}
	if p.started != deliverParallel {
		t.Errorf("started %d goroutines, want %d", p.started, deliverParallel)
	}
}
