package main

import (
	"context"
	"encoding/binary"
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
//
// It keeps its keys and arrivals without pointers (packedKey), so that the garbage collector
// never walks them: scenario 4 keeps a million, and as strings (in a map and a slice, each
// holding on to its request's header) they were 130 MB of the 140 MB live heap of the
// process that runs Herald and is measured idle; each collection (one is forced every 2
// minutes, idle or not) marked them all: 60-80 ms of CPU in BenchmarkReceiverGC, 3-5 ms
// packed, against about 100 ms for all of Herald's idle work over a 10 s window. Herald's own
// live heap there is a few MB.
type receiver struct {
	URL     string
	stop    func()
	latency time.Duration
	keysOf  func(body []byte, h http.Header) []string // nil: the Idempotency-Key header

	mu         sync.Mutex
	seen       map[packedKey]struct{}
	long       []string        // keys too long to pack (Herald's are not), indexed by their packedKey
	longSeen   map[string]bool // and the same as a set
	arrivals   []packedArrival // the first arrival of each key, in the order they came
	duplicates int
}

// keyRoom is the longest key a packedKey holds in itself: Herald's Idempotency-Key is an
// alert id (24 characters), a notification's index and a sequence number.
const keyRoom = 46

// longKey marks a packedKey that holds an index into receiver.long.
const longKey = 0xff

// packedKey is a key held without a pointer: its bytes (n of them), or for a longer key
// (n == longKey) its index in receiver.long, in the first 4 bytes.
type packedKey struct {
	n uint8
	b [keyRoom]byte
}

// packedArrival is an arrival held without a pointer (at: Unix nanoseconds).
type packedArrival struct {
	key packedKey
	at  int64
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
	r := &receiver{seen: map[packedKey]struct{}{}, longSeen: map[string]bool{}, latency: latency, keysOf: keysOf}
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
		if k, first := r.first(key); first {
			r.arrivals = append(r.arrivals, packedArrival{key: k, at: at.UnixNano()})
		} else {
			r.duplicates++
		}
	}
	r.mu.Unlock()
	time.Sleep(r.latency)
}

// first records key, packed, and reports whether this is its first arrival.
func (r *receiver) first(key string) (packedKey, bool) {
	k, ok := packKey(key)
	if !ok {
		if r.longSeen[key] {
			return packedKey{}, false
		}
		r.longSeen[key] = true
		k = packedKey{n: longKey}
		binary.LittleEndian.PutUint32(k.b[:4], uint32(len(r.long)))
		r.long = append(r.long, key)
		return k, true
	}
	if _, ok := r.seen[k]; ok {
		return k, false
	}
	r.seen[k] = struct{}{}
	return k, true
}

// packKey is key packed in itself; false when it is too long for that.
func packKey(key string) (packedKey, bool) {
	if len(key) > keyRoom {
		return packedKey{}, false
	}
	k := packedKey{n: uint8(len(key))}
	copy(k.b[:], key)
	return k, true
}

// unpack is the key k holds.
func (r *receiver) unpack(k packedKey) string {
	if k.n == longKey {
		return r.long[binary.LittleEndian.Uint32(k.b[:4])]
	}
	return string(k.b[:k.n])
}

// results are the distinct deliveries so far, in arrival order, and the duplicates.
func (r *receiver) results() ([]arrival, int) { return r.resultsFrom(0) }

// resultsFrom is results without the first from deliveries (scenario 4 needs only its slice's,
// not a million strings).
func (r *receiver) resultsFrom(from int) ([]arrival, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]arrival, 0, max(len(r.arrivals)-from, 0))
	for _, a := range r.arrivals[min(from, len(r.arrivals)):] {
		out = append(out, arrival{Key: r.unpack(a.key), At: time.Unix(0, a.at)})
	}
	return out, r.duplicates
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
