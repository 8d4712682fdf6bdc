package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// receiver is the webhook target of a scenario: it answers 200 after its latency (none: at
// once) and keeps, per key (Herald's Idempotency-Key, or what keysOf finds in a request), when
// the delivery first arrived. A key that comes again is a duplicate.
type receiver struct {
	URL     string
	stop    func()
	latency time.Duration
	keysOf  func(body []byte, h http.Header) []string // nil: the Idempotency-Key header

	mu         sync.Mutex
	seen       map[string]bool
	arrivals   []arrival // the first arrival of each key, in the order they came
	duplicates int
}

// arrival is a delivery's first arrival at the receiver.
type arrival struct {
	Key string // its Idempotency-Key (<alertId>-<notification>-<seq>), or what keysOf found
	At  time.Time
}

func startReceiver(latency time.Duration) (*receiver, error) { return startKeyedReceiver(latency, nil) }

// startKeyedReceiver starts a receiver that tells deliveries apart by keysOf (nil: by
// Idempotency-Key).
func startKeyedReceiver(latency time.Duration, keysOf func([]byte, http.Header) []string) (*receiver, error) {
	r := &receiver{seen: map[string]bool{}, latency: latency, keysOf: keysOf}
	base, stop, err := serveLoopback(http.HandlerFunc(r.receive))
	if err != nil {
		return nil, err
	}
	r.URL, r.stop = base+"/hook", stop
	return r, nil
}

func (r *receiver) receive(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	keys := []string{req.Header.Get("Idempotency-Key")}
	if r.keysOf != nil {
		body, _ := io.ReadAll(req.Body)
		keys = r.keysOf(body, req.Header)
	} else {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	r.mu.Lock()
	for _, key := range keys {
		if r.seen[key] {
			r.duplicates++
		} else {
			r.seen[key] = true
			r.arrivals = append(r.arrivals, arrival{Key: key, At: at})
		}
	}
	r.mu.Unlock()
	time.Sleep(r.latency)
}

// results are the distinct deliveries so far, in arrival order, and the duplicates.
func (r *receiver) results() ([]arrival, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]arrival(nil), r.arrivals...), r.duplicates
}

// counts are how many distinct deliveries and duplicates arrived so far.
func (r *receiver) counts() (distinct, duplicates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.arrivals), r.duplicates
}

// waitFor waits until n distinct deliveries have arrived.
func (r *receiver) waitFor(ctx context.Context, n int, within time.Duration) error {
	err := poll(ctx, within, func() (bool, error) {
		distinct, _ := r.counts()
		return distinct >= n, nil
	})
	if err != nil {
		distinct, _ := r.counts()
		return fmt.Errorf("%d of %d deliveries arrived: %w", distinct, n, err)
	}
	return nil
}

// serveLoopback serves h over HTTP on a free port of 127.0.0.1 until stop.
func serveLoopback(h http.Handler) (baseURL string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}
