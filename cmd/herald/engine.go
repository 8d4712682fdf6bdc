package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/alertinga"
	"github.com/heraldhq/herald/channels/alertingb"
	"github.com/heraldhq/herald/channels/chata"
	"github.com/heraldhq/herald/channels/chatb"
	"github.com/heraldhq/herald/channels/chatc"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/metricsa"
	"github.com/heraldhq/herald/channels/paging"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/channels/webhook"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// services are where each kind of delivery goes: the service's address (empty: its public
// one) and, for mail and text messages, the operator's server and credentials.
type services struct {
	PagingURL, AlertingAURL, AlertingAEUURL, AlertingBURL, ChatAURL, ChatBURL, MetricsAURL string
	SMTPAddr, SMTPFrom, SMTPUsername                                                       string
	SMSURL, SMSAccount, SMSFrom                                                            string
	// Read from the environment only, so that --help never shows them.
	smtpPassword, smsToken string
}

func (v *services) bind(s settings) {
	// A service's address that every request of its kind would fail on stops the worker at
	// start, rather than failing each delivery.
	service := func(p *string, name, env, help string) {
		s.string(p, name, env, "", help)
		s.check(func() error { return checkBaseURL(env, *p, "a service's address", "https://service.example.com") })
	}
	service(&v.PagingURL, "paging-url", "HERALD_PAGING_URL", "PAGING service address (default: the public one)")
	service(&v.AlertingAURL, "alerting-a-url", "HERALD_ALERTING_A_URL", "ALERTING_A service address, region US")
	service(&v.AlertingAEUURL, "alerting-a-eu-url", "HERALD_ALERTING_A_EU_URL", "ALERTING_A service address, region EU")
	service(&v.AlertingBURL, "alerting-b-url", "HERALD_ALERTING_B_URL", "ALERTING_B service address")
	service(&v.ChatAURL, "chat-a-url", "HERALD_CHAT_A_URL", "CHAT_A service address")
	service(&v.ChatBURL, "chat-b-url", "HERALD_CHAT_B_URL", "CHAT_B service address")
	service(&v.MetricsAURL, "metrics-a-url", "HERALD_METRICS_A_URL", "METRICS_A service address")
	s.string(&v.SMTPAddr, "smtp-addr", "HERALD_SMTP_ADDR", "", "mail server host:port for EMAIL (and GROUP/ORG/USER by email); unset: no mail")
	s.string(&v.SMTPFrom, "smtp-from", "HERALD_SMTP_FROM", "herald@localhost", "sender address of mail")
	s.string(&v.SMTPUsername, "smtp-username", "HERALD_SMTP_USERNAME", "", "mail server login (the password: HERALD_SMTP_PASSWORD, environment only)")
	service(&v.SMSURL, "sms-url", "HERALD_SMS_URL", "SMS gateway address (default: the public one); unset account: no SMS")
	s.string(&v.SMSAccount, "sms-account", "HERALD_SMS_ACCOUNT", "", "SMS gateway account (the token: HERALD_SMS_TOKEN, environment only)")
	s.string(&v.SMSFrom, "sms-from", "HERALD_SMS_FROM", "", "sender number of text messages")
	s.environmentOnly(&v.smtpPassword, "HERALD_SMTP_PASSWORD")
	s.environmentOnly(&v.smsToken, "HERALD_SMS_TOKEN")
	s.check(func() error {
		return errors.Join(checkSecret("HERALD_SMTP_PASSWORD", v.smtpPassword), checkSecret("HERALD_SMS_TOKEN", v.smsToken),
			checkTrimmed("HERALD_SMTP_USERNAME", v.SMTPUsername), checkTrimmed("HERALD_SMS_ACCOUNT", v.SMSAccount),
			checkTrimmed("HERALD_SMS_FROM", v.SMSFrom))
	})
	s.check(func() error {
		if v.SMTPAddr == "" { // no mail
			return nil
		}
		if err := (email.Config{Addr: v.SMTPAddr, From: v.SMTPFrom}).Check(); err != nil {
			return fmt.Errorf("%w: HERALD_SMTP_ADDR=%q, HERALD_SMTP_FROM=%q", err, v.SMTPAddr, v.SMTPFrom)
		}
		return nil
	})
}

// sender is how one kind's notifier is made: from the settings it names (the HERALD_*
// variables of services; the kinds test checks each is in deploy/herald.env.example) and an
// HTTP client of its own. A nil notifier: the operator has not configured the kind (mail, SMS).
type sender struct {
	settings []string
	make     func(v services, client *http.Client) channels.Notifier
}

// wiring is the sender of every kind of the registry (herald.Kinds) that has a target of its
// own, by kind name; the kinds that reach people go through EMAIL and SMS. The kinds test
// fails for a kind missing here.
var wiring = map[string]sender{
	"WEBHOOK": {make: func(v services, client *http.Client) channels.Notifier {
		return webhook.Notifier{Client: client}
	}},
	"PAGING": {settings: []string{"HERALD_PAGING_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return paging.Notifier{Client: client, BaseURL: v.PagingURL}
	}},
	"ALERTING_A": {settings: []string{"HERALD_ALERTING_A_URL", "HERALD_ALERTING_A_EU_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return alertinga.Notifier{Client: client, BaseURL: v.AlertingAURL, EUBaseURL: v.AlertingAEUURL}
	}},
	"ALERTING_B": {settings: []string{"HERALD_ALERTING_B_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return alertingb.Notifier{Client: client, BaseURL: v.AlertingBURL}
	}},
	"CHAT_A": {settings: []string{"HERALD_CHAT_A_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return chata.Notifier{Client: client, BaseURL: v.ChatAURL}
	}},
	"CHAT_B": {settings: []string{"HERALD_CHAT_B_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return chatb.Notifier{Client: client, BaseURL: v.ChatBURL}
	}},
	"CHAT_C": {make: func(v services, client *http.Client) channels.Notifier {
		return chatc.Notifier{Client: client}
	}},
	"METRICS_A": {settings: []string{"HERALD_METRICS_A_URL"}, make: func(v services, client *http.Client) channels.Notifier {
		return metricsa.Notifier{Client: client, BaseURL: v.MetricsAURL}
	}},
	"SMS": {settings: []string{"HERALD_SMS_URL", "HERALD_SMS_ACCOUNT", "HERALD_SMS_FROM", "HERALD_SMS_TOKEN"},
		make: func(v services, client *http.Client) channels.Notifier {
			if v.SMSAccount == "" {
				return nil
			}
			return sms.Notifier{Client: client, BaseURL: v.SMSURL, AccountSID: v.SMSAccount, AuthToken: v.smsToken, From: v.SMSFrom}
		}},
	"EMAIL": {settings: []string{"HERALD_SMTP_ADDR", "HERALD_SMTP_FROM", "HERALD_SMTP_USERNAME", "HERALD_SMTP_PASSWORD"},
		make: func(v services, _ *http.Client) channels.Notifier {
			if v.SMTPAddr == "" {
				return nil
			}
			return email.Notifier{Config: email.Config{Addr: v.SMTPAddr, From: v.SMTPFrom, Username: v.SMTPUsername, Password: v.smtpPassword}}
		}},
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
	for _, kind := range herald.Senders() {
		s, ok := wiring[kind]
		if !ok {
			continue // none wired: TestEveryKindIsWired names the kind
		}
		if n := s.make(v, client); n != nil {
			out[kind] = n
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
	notifiers, mailer := sendersOver(c.services, transport.Client(channels.DefaultTimeout))
	engine := dispatch.NewEngine(st, d, dispatch.EngineConfig{Notifiers: notifiers, Mailer: mailer, Administrators: c.Administrators, Minute: c.Minute,
		Lease: c.Lease, Observer: processMetrics(), Clock: herald.SystemClock{}, Log: log.Named("engine")})
	w := dispatch.NewWorker(engine, dispatch.WorkerConfig{Concurrency: c.Concurrency, Queues: queues})
	return w, w.Start()
}
