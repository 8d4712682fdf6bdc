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

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// BenchmarkKeptAlertRead is bench's scenario 7 (GET of one alert by a kept key, nc+1 a
// request) without the HTTP server and the client: the API's handler alone, logging at info
// as deployed, on a real Redis. Its allocs/op are the API's own and go-redis's (the answers'
// Authorization headers are made before the clock starts); redis-µs/op is redis-server's CPU.
func BenchmarkKeptAlertRead(b *testing.B) {
	ctx, now := context.Background(), time.Now()
	rdb := storetest.Redis(b)
	st := store.New(rdb)
	org := herald.Org{ID: herald.NewID(now), Name: "acme", Created: herald.At(now)}
	proj, _ := herald.NewProject("prod", org.ID, nil, now)
	k, priv := api.NewAPIKey("bench key", org.ID, []herald.Role{{GroupID: proj.ID, RoleName: herald.GroupReadOnly}}, now)
	a := hostDownAlert(proj.ID, "OPEN", now)
	for _, err := range []error{
		st.CreateOrg(ctx, org, herald.Event{}), st.CreateProject(ctx, proj, nil, herald.Event{}),
		st.CreateAPIKey(ctx, k, nil), st.SaveAlert(ctx, a, false, ""),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel))
	h, err := api.New(ctx, st, dispatch.NewDispatcher(st, herald.SystemClock{}), log, api.Config{})
	if err != nil {
		b.Fatal(err)
	}
	path := api.BasePath + "/groups/" + proj.ID + "/alerts/" + a.ID
	challenge := func() string {
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, readRequest(b, path, nil))
		return challengeParam(w.h.Get("WWW-Authenticate"), "nonce")
	}
	// Each client its nonce, its answers made before the clock starts (more, should it be
	// given more than its share).
	const clients = 64
	type client struct {
		nonce string
		auths [][]string
	}
	cs := make(chan *client, clients)
	for range clients {
		c := &client{nonce: challenge()}
		for nc := range 2*b.N/clients + 2 {
			c.auths = append(c.auths, []string{digestHeader(k.PublicKey, priv, c.nonce, nc+1, "GET", path)})
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
				c.auths = append(c.auths, []string{digestHeader(k.PublicKey, priv, c.nonce, nc+1, "GET", path)})
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
func readRequest(b *testing.B, path string, authorization []string) *http.Request {
	req, err := http.NewRequest("GET", "http://127.0.0.1"+path, nil)
	if err != nil {
		b.Fatal(err)
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
