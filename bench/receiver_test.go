package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// deliver hands the receiver a delivery with Idempotency-Key key, as Herald sends one.
func deliver(r *receiver, key string) {
	req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader("{}"))
	req.Header.Set("Idempotency-Key", key)
	r.receive(httptest.NewRecorder(), req)
}

// Keys, short or too long to pack, come back as they came, in arrival order, each once; a
// key that comes again is a duplicate.
func TestReceiverKeepsEachKeyOnce(t *testing.T) {
	r := &receiver{seen: map[packedKey]struct{}{}, longSeen: map[string]bool{}}
	long := strings.Repeat("x", keyRoom+1)
	room := strings.Repeat("y", keyRoom)
	keys := []string{"67430000aabbcc0000000001-0-1", long, "", room, "67430000aabbcc0000000001-0-2"}
	for _, k := range keys {
		deliver(r, k)
	}
	for _, k := range []string{long, "67430000aabbcc0000000001-0-1", room} {
		deliver(r, k)
	}
	got, dup := r.results()
	var gotKeys []string
	for _, a := range got {
		gotKeys = append(gotKeys, a.Key)
	}
	if !slices.Equal(gotKeys, keys) || dup != 3 {
		t.Fatalf("keys %q with %d duplicates, want %q with 3", gotKeys, dup, keys)
	}
	if d, n := r.counts(); d != len(keys) || n != 3 {
		t.Errorf("counts %d, %d", d, n)
	}
	from, _ := r.resultsFrom(3)
	if len(from) != 2 || from[0].Key != room || from[1] != got[4] {
		t.Errorf("resultsFrom(3): %+v", from)
	}
	if beyond, _ := r.resultsFrom(10); len(beyond) != 0 {
		t.Errorf("resultsFrom past the end: %+v", beyond)
	}
	if at := got[0].At; time.Since(at) > time.Minute || at.After(time.Now()) {
		t.Errorf("arrival time %s", at)
	}
}

// A collection with a million keys in the receiver (scenario 4 holds as many): what a cycle
// costs the bench's process on top of Herald's heap.
func BenchmarkReceiverGC(b *testing.B) {
	r := &receiver{seen: map[packedKey]struct{}{}, longSeen: map[string]bool{}}
	for i := range 1_000_000 {
		key := fmt.Sprintf("67430000aabbcc%010x-0-1", i)
		k, _ := r.first(key)
		r.arrivals = append(r.arrivals, packedArrival{key: k, at: int64(i)})
	}
	runtime.GC()
	cpu0, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
	}
	cpu1, err := processCPU()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	runtime.KeepAlive(r)
}
