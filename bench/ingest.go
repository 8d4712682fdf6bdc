package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// The ingest scenario: agents post observations in batches of -batch, from ingestClients
// clients at once for -ingest-for, to `herald api` while a `herald worker` evaluates them (both
// processes of their own on the benchmark's Redis). Figures: observations accepted (202) a
// second, and the API process's peak resident memory.
const (
	ingestClients    = 16
	ingestRateTarget = 50_000
	ingestRSSTarget  = 256 << 20
)

// ingest is the scenario. Each client is one agent reporting on hosts of its own, the same
// hosts every time (HOST_DOWN inactive: the steady state of a fleet that is up).
func (b *bench) ingest(ctx context.Context) ([]figure, error) {
	a, err := b.startAPIUnderTest(ctx)
	if err != nil {
		return nil, err
	}
	defer a.stop()
	w, err := b.startWorker()
	if err != nil {
		return nil, err
	}
	defer w.stop()
	admin := apiClient{base: a.base + api.BasePath, http: keepAliveClient(benchPublicKey, benchPrivateKey)}
	var org, project struct{ ID string }
	if err := admin.call(ctx, "POST", "/orgs", map[string]any{"name": "bench"}, http.StatusCreated, &org); err != nil {
		return nil, err
	}
	if err := admin.call(ctx, "POST", "/groups", map[string]any{"name": "bench", "orgId": org.ID}, http.StatusCreated, &project); err != nil {
		return nil, err
	}
	bodies := make([][]byte, ingestClients)
	inactive := false
	for c := range bodies {
		obs := make([]herald.Observation, b.sizes.Batch)
		for i := range obs {
			host := fmt.Sprintf("agent%d-host%d", c, i)
			obs[i] = herald.Observation{EventTypeName: "HOST_DOWN", Active: &inactive, HostID: host, HostnameAndPort: host + ".example.com:27017"}
		}
		if bodies[c], err = json.Marshal(obs); err != nil {
			return nil, err
		}
	}
	url := a.base + api.BasePath + "/groups/" + project.ID + "/observations"
	log.Printf("ingest: %d clients posting %d observations a request for %s", ingestClients, b.sizes.Batch, b.sizes.IngestFor)
	res, err := runLoad(ctx, clientsOf(ingestClients, benchPublicKey, benchPrivateKey), b.sizes.IngestFor, http.StatusAccepted, http.StatusServiceUnavailable,
		func(ctx context.Context, c int) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bodies[c]))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
			}
			return req, err
		})
	if err != nil {
		return nil, err
	}
	rate := float64(res.ok*b.sizes.Batch) / res.took.Seconds()
	figs := []figure{
		{Name: "8. observations accepted (202) → /s", Value: fmt.Sprintf("%.0f /s (%d requests of %d, %d refused for a full backlog, p99 %s)",
			rate, res.ok, b.sizes.Batch, res.tolerated, res.p99().Round(time.Millisecond)),
			Target: fmt.Sprintf("≥ %d /s", ingestRateTarget), Result: judge(rate >= ingestRateTarget)},
	}
	rss, err := a.peakRSS()
	if err != nil {
		return nil, err
	}
	return append(figs, figure{Name: "8. API peak memory (RSS)", Value: fmt.Sprintf("%.0f MB", float64(rss)/(1<<20)),
		Target: fmt.Sprintf("≤ %d MB", ingestRSSTarget>>20), Result: judge(rss <= ingestRSSTarget)}), nil
}
