package main

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/registry"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// services are the settings of the senders, by variable (HERALD_PAGING_URL): each kind's
// package declares its own (channels.Kind.Settings).
type services channels.Settings

// bind binds the settings of every kind's sender. A service's address that every request of
// its kind would fail on, or a secret still holding the deploy files' placeholder, stops the
// worker at start rather than failing each delivery.
func (v *services) bind(s settings) {
	for _, k := range registry.Kinds {
		for _, st := range k.Settings {
			v.bindOne(s, st, st.Help)
		}
		if k.Check != nil {
			s.check(func() error { return k.Check(channels.Settings(*v)) })
		}
	}
}

// bindOne binds setting st, with help, and its checks.
func (v *services) bindOne(s settings, st channels.Setting, help string) {
	if *v == nil {
		*v = services{}
	}
	p := new(string)
	if st.Secret {
		s.environmentOnly(p, st.Env)
	} else {
		s.string(p, st.Flag, st.Env, st.Default, help)
	}
	s.check(func() error {
		(*v)[st.Env] = *p
		switch {
		case st.Address:
			return checkBaseURL(st.Env, *p, "a service's address", "https://service.example.com")
		case st.Secret:
			return checkSecret(st.Env, *p)
		case st.Exact:
			return checkTrimmed(st.Env, *p)
		}
		return nil
	})
}

// senders are the notifiers of every kind Herald delivers, by kind name (herald.Kind.Name),
// and the mailer of the owners' notices (the EMAIL sender), over a client of their own that
// refuses private targets unless allowPrivate.
func senders(v services, allowPrivate bool) (map[string]channels.Notifier, dispatch.Mailer) {
	return sendersOver(v, channels.NewHTTPClient(allowPrivate, channels.DefaultTimeout))
}

// sendersOver is senders over client, which every HTTP kind shares: its transport keeps
// connections per host, so that a slow service holds only its own.
func sendersOver(v services, client *http.Client) (map[string]channels.Notifier, dispatch.Mailer) {
	out := map[string]channels.Notifier{}
	for _, k := range registry.Kinds {
		if k.New == nil {
			continue // reaches people, by EMAIL and SMS
		}
		if n := k.New(channels.Settings(v), client); n != nil {
			out[k.Name] = n
		}
	}
	mailer, _ := out["EMAIL"].(dispatch.Mailer)
	return out, mailer
}

// deliverySetup is what workers of these settings deliver, derived from the senders they make
// so that the API's warnings and the workers agree.
func deliverySetup(v services, allowPrivate bool) *herald.DeliverySetup {
	notifiers, _ := senders(v, allowPrivate)
	return &herald.DeliverySetup{Mail: notifiers["EMAIL"] != nil, SMS: notifiers["SMS"] != nil, PrivateTargets: allowPrivate}
}

// startWorker starts the alert engine's worker on st. Its senders' TLS files are read again
// at every SIGHUP until ctx ends.
func startWorker(ctx context.Context, st *store.Store, d *dispatch.Dispatcher, c common, log *zap.Logger) (*dispatch.Worker, error) {
	queues, err := queuePriorities(c.QueuePriorities)
	if err != nil {
		return nil, err
	}
	transport, err := c.Outbound.transport(c.AllowPrivate)
	if err != nil {
		return nil, err
	}
	c.Outbound.describe(log)
	c.Outbound.reloadOnHangup(ctx, transport, log)
	linker, err := c.Actions.linker(log)
	if err != nil {
		return nil, err
	}
	notifiers, mailer := sendersOver(c.services, transport.Client(channels.DefaultTimeout))
	rememberSMSReplies(notifiers, st, log)
	engine := dispatch.NewEngine(st, d, dispatch.EngineConfig{Notifiers: notifiers, Mailer: mailer, Administrators: c.Administrators, Minute: c.Minute,
		Lease: c.Lease, Paces: c.Paces, DigestAfter: c.DigestAfter, DigestWindow: c.DigestWindow, Linker: linker, Observer: processMetrics(), Clock: herald.SystemClock{}, Log: log.Named("engine")})
	w := dispatch.NewWorker(engine, dispatch.WorkerConfig{Concurrency: c.Concurrency, Queues: queues})
	return w, w.Start()
}

// rememberSMSReplies makes the SMS sender keep, per number, the last notice it texted with a
// reply code, for as long as its links live: the API's inbound webhook acts on a reply from
// that number (docs/api.md#service-callbacks). A failure to keep it is logged: the text went.
func rememberSMSReplies(notifiers map[string]channels.Notifier, st *store.Store, log *zap.Logger) {
	n, ok := notifiers["SMS"].(sms.Notifier)
	if !ok {
		return
	}
	n.Sent = func(ctx context.Context, to string, d channels.Delivery) {
		last := store.SMSNotice{GroupID: d.Alert.GroupID, AlertID: d.Alert.ID, Global: d.Global, Sent: time.Now()}
		if err := st.RememberSMS(ctx, to, last, actlink.MaxAge); err != nil {
			log.Warn("the last notice texted to a number was not kept: a reply to it will not act",
				zap.String("deliveryId", d.ID), zap.String("alertId", d.Alert.ID), zap.Error(err))
		}
	}
	notifiers["SMS"] = n
}
