package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/api/digest"
)

// loadResult is what a closed-loop load of some clients did: requests answered with the status
// wanted, those answered with the status tolerated, how long it ran, and each wanted answer's
// latency.
type loadResult struct {
	ok, tolerated int
	took          time.Duration
	latencies     []time.Duration
}

func (l loadResult) rate() float64 { return float64(l.ok) / l.took.Seconds() }

// p99 is the 99th percentile latency.
func (l loadResult) p99() time.Duration {
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// keepAliveClient is one client with one keep-alive connection of its own, answering Digest
// challenges as an agent does (one nonce, nc+1 a request) when username is set.
func keepAliveClient(username, password string) *http.Client {
	base := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true}
	var rt http.RoundTripper = base
	if username != "" {
		rt = &digest.Transport{Username: username, Password: password, Base: base}
	}
	return &http.Client{Transport: rt, Timeout: time.Minute}
}

// loadGrace is how long past its end a load's last requests may take before they fail it.
const loadGrace = time.Minute

// runLoad runs clients closed loops for d, each sending what newRequest makes and expecting
// status want (or tolerate, counted apart; 0: none); the first other answer ends the load
// with an error.
func runLoad(ctx context.Context, clients []*http.Client, d time.Duration, want, tolerate int, newRequest func(ctx context.Context, client int) (*http.Request, error)) (loadResult, error) {
	start := time.Now()
	deadline := start.Add(d)
	// Every request is bounded by the load's deadline (its end and loadGrace), not by each
	// client's Timeout: net/http applies a Client.Timeout to a RoundTripper other than its
	// own Transport (Digest's is one) with a goroutine, a timer and two channels a request,
	// which the clients of the plain handler, on net/http's Transport, do not pay. Both
	// sides' clients cost the same for what they share.
	ctx, cancelDeadline := context.WithDeadline(ctx, deadline.Add(loadGrace))
	defer cancelDeadline()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	for i, c := range clients {
		c := &http.Client{Transport: c.Transport, Jar: c.Jar, CheckRedirect: c.CheckRedirect} // without its Timeout
		wg.Go(func() {
			var lat []time.Duration
			tolerated := 0
			defer func() {
				mu.Lock()
				res.latencies, res.tolerated = append(res.latencies, lat...), res.tolerated+tolerated
				mu.Unlock()
			}()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				req, err := newRequest(ctx, i)
				if err != nil {
					cancel(err)
					return
				}
				t := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					cancel(err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					cancel(err)
					return
				}
				if resp.StatusCode == tolerate && tolerate != 0 {
					tolerated++
					continue
				}
				if resp.StatusCode != want {
					cancel(fmt.Errorf("%s %s: %d, want %d: %.300s", req.Method, req.URL.Path, resp.StatusCode, want, body))
					return
				}
				lat = append(lat, time.Since(t))
			}
		})
	}
	wg.Wait()
	res.took = time.Since(start)
	res.ok = len(res.latencies)
	if err := context.Cause(ctx); err != nil && ctx.Err() != nil {
		return res, err
	}
	return res, nil
}
