package api_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// keptReadRig is an API handler (logging at info, as deployed) on a real Redis with a project,
// an open alert in it, and a read-only key of the project: what a polled alert read needs.
type keptReadRig struct {
	h         http.Handler
	rdb       *redis.Client
	st        *store.Store
	alert     herald.Alert // as saved
	path      string       // the alert's, under the host
	user, key string       // the key's digest user name and secret
}

func newKeptReadRig(tb testing.TB) *keptReadRig {
	ctx, now := context.Background(), time.Now()
	rdb := storetest.Redis(tb)
	st := store.New(rdb)
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	proj, _ := herald.NewProject("prod", org.ID, nil, now)
	k, priv := api.NewAPIKey("bench key", org.ID, []herald.Role{{GroupID: proj.ID, RoleName: herald.GroupReadOnly}}, now)
	a := hostDownAlert(proj.ID, "OPEN", now)
	for _, err := range []error{
		st.CreateOrg(ctx, org, herald.Event{}), st.CreateProject(ctx, proj, nil, herald.Event{}),
		st.CreateAPIKey(ctx, k, nil), st.SaveAlert(ctx, a, false, ""),
		st.MarkNotified(ctx, store.Scope{GroupID: proj.ID}, map[string]time.Time{a.ID: now}),
	} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel))
	h, err := api.New(ctx, st, dispatch.NewDispatcher(st, herald.SystemClock{}), log, api.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	return &keptReadRig{h: h, rdb: rdb, st: st, alert: a, path: api.BasePath + "/groups/" + proj.ID + "/alerts/" + a.ID, user: k.PublicKey, key: priv}
}

// nonce is a new nonce of the API's, as a client learns it from a challenge.
func (rig *keptReadRig) nonce(tb testing.TB) string {
	w := &discardWriter{h: http.Header{}}
	rig.h.ServeHTTP(w, readRequest(tb, rig.path, nil))
	return challengeParam(w.h.Get("WWW-Authenticate"), "nonce")
}

// authorization is the Authorization header of the rig's key's read with nonce and count nc.
func (rig *keptReadRig) authorization(nonce string, nc int) []string {
	return []string{digestHeader(rig.user, rig.key, nonce, nc, "GET", rig.path)}
}

// A polled read of an alert by a kept key allocates within a bound: its documents, unchanged
// between polls, are not decoded again, and its answer is encoded in a buffer used again.
func TestKeptAlertReadAllocations(t *testing.T) {
	if !storetest.Real() {
		t.Skip("the embedded store runs in this process: its allocations would count as the API's")
	}
	rig := newKeptReadRig(t)
	nonce := rig.nonce(t)
	const runs = 200
	auths := make([][]string, runs+2)
	for i := range auths {
		auths[i] = rig.authorization(nonce, i+1)
	}
	w := &discardWriter{h: http.Header{}}
	req := readRequest(t, rig.path, nil)
	nc, failed := 0, 0
	read := func() {
		clear(w.h)
		w.status = 0
		req.Header["Authorization"] = auths[nc]
		nc++
		rig.h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			failed++
		}
	}
	read() // the first read of the key and of the documents
	allocs := testing.AllocsPerRun(runs, read)
	if failed > 0 {
		t.Fatalf("%d of %d reads not answered 200", failed, nc)
	}
	// The request's record, its Redis commands, replies and round trip (one a read here:
	// under load, reads share them), the log line, the answer's link. Decoding the documents
	// again took some 20 more, and encoding the answer anew in buffers of its own a dozen.
	if allocs > 50 {
		t.Errorf("%v allocations a read, want at most 50", allocs)
	}
}

// BenchmarkKeptAlertRead is bench's scenario 7 (GET of one alert by a kept key, nc+1 a
// request) without the HTTP server and the client: the API's handler alone (keptReadRig).
// Its allocs/op are the API's own and go-redis's (the answers' Authorization headers are made
// before the clock starts); redis-µs/op is redis-server's CPU.
func BenchmarkKeptAlertRead(b *testing.B) {
	rig := newKeptReadRig(b)
	h, rdb, path := rig.h, rig.rdb, rig.path
	// Each client its nonce, its answers made before the clock starts (more, should it be
	// given more than its share).
	const clients = 64
	type client struct {
		nonce string
		auths [][]string
	}
	cs := make(chan *client, clients)
	for range clients {
		c := &client{nonce: rig.nonce(b)}
		for nc := range 2*b.N/clients + 2 {
			c.auths = append(c.auths, rig.authorization(c.nonce, nc+1))
		}
		cs <- c
	}
	var refused atomic.Int64
	var before, after syscall.Rusage
	b.ReportAllocs()
	b.SetParallelism(clients / runtime.GOMAXPROCS(0))
	b.ResetTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	redis0 := storetest.RedisCPU(b, rdb)
	b.RunParallel(func(pb *testing.PB) {
		c := <-cs
		w := &discardWriter{h: http.Header{}}
		req := readRequest(b, path, nil)
		for nc := 0; pb.Next(); nc++ {
			if nc == len(c.auths) {
				c.auths = append(c.auths, rig.authorization(c.nonce, nc+1))
			}
			clear(w.h)
			w.status = 0
			req.Header["Authorization"] = c.auths[nc]
			h.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				refused.Add(1)
			}
		}
	})
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	b.StopTimer()
	b.ReportMetric(float64((storetest.RedisCPU(b, rdb)-redis0).Nanoseconds())/1e3/float64(b.N), "redis-µs/op")
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	if n := refused.Load(); n > 0 {
		b.Fatalf("%d of %d requests not answered 200", n, b.N)
	}
}

// readRequest is a GET of path from 127.0.0.1 with authorization (nil: none).
func readRequest(tb testing.TB, path string, authorization []string) *http.Request {
	req, err := http.NewRequest("GET", "http://127.0.0.1"+path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.RemoteAddr = "127.0.0.1:40000"
	if authorization != nil {
		req.Header["Authorization"] = authorization
	}
	return req
}

// discardWriter is a ResponseWriter that keeps the status and headers, not the body.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}
