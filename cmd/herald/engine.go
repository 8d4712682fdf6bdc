package main

import (
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// senders are the notifiers of every kind Herald delivers, by notification typeName.
func senders(allowPrivate bool) map[string]channels.Notifier {
	client := channels.NewHTTPClient(allowPrivate, 10*time.Second)
	return map[string]channels.Notifier{
		"WEBHOOK": webhook.Notifier{Client: client},
	}
}

// startWorker starts the alert engine's worker on st.
func startWorker(st *store.Store, d *dispatch.Dispatcher, c common, log *zap.Logger) (*dispatch.Worker, error) {
	engine := dispatch.NewEngine(st, d, dispatch.EngineConfig{Notifiers: senders(c.AllowPrivate), Minute: c.Minute,
		Lease: c.Lease, Clock: herald.SystemClock{}, Log: log.Named("engine")})
	w := dispatch.NewWorker(engine, dispatch.WorkerConfig{Concurrency: c.Concurrency})
	return w, w.Start()
}
