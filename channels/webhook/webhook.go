package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// Webhook headers (docs/decisions.md#webhooks).
const (
	headerEvent          = "X-Vendor-Event"
	headerSignature      = "X-Vendor-Signature"
	headerIdempotencyKey = "Idempotency-Key"
	userAgent            = "Herald"
)

// Notifier posts the alert to the notification's webhookUrl (or the WEBHOOK integration's url),
// signed with its webhookSecret (or the integration's secret).
//
// The request: POST, Content-Type application/json, the body the alert as the API shows it
// plus `humanReadable` (channels.Summary) and, when the delivery offers any, `links` (the
// signed action links, herald.ActionLinks), X-Vendor-Event the delivery's event,
// X-Vendor-Signature base64(HMAC-SHA1(secret, raw body)) only when there is a secret,
// Idempotency-Key the delivery's ID, User-Agent Herald.
//
// The integration's secret signs only requests to the integration's URL: a notification with
// its own URL and no secret of its own sends unsigned, so that a secret is never used for a
// target it was not configured for.
//
// Client nil means a client from channels.NewHTTPClient(false, 10s): private addresses refused.
type Notifier struct{ Client *http.Client }

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	target, secret, f := webhookTarget(d)
	if f != nil {
		return f
	}
	if d.ID == "" {
		return &channels.Failure{Reason: "delivery has no id"}
	}
	if d.Event == "" {
		return &channels.Failure{Reason: "delivery has no event"}
	}
	a := d.Alert
	a.HumanReadable = channels.Summary(a)
	body, err := json.Marshal(withLinks{a, d.Links})
	if err != nil {
		return &channels.Failure{Reason: "alert could not be encoded"}
	}
	return channels.Send(n.Client, request(ctx, target, body, d, secret))
}

// withLinks is the body: the alert as the API shows it, then the delivery's links, if any.
type withLinks struct {
	herald.Alert
	Links herald.ActionLinks `json:"links,omitzero"`
}

// request is the POST of body to target, built from the URL webhookTarget parsed (rather than
// parsing it again) with its headers set directly under their canonical names: a storm sends
// many thousands a second. The constant headers' values are shared slices (net/http only reads
// a request's header; Header.Add would append to a full slice, so copy).
func request(ctx context.Context, target *parsedTarget, body []byte, d channels.Delivery, secret string) *http.Request {
	h := http.Header{
		"Content-Type":       contentTypeJSON,
		"User-Agent":         userAgentHerald,
		headerEvent:          {string(d.Event)},
		headerIdempotencyKey: {d.ID},
	}
	if secret != "" {
		h[headerSignature] = []string{sign(secret, body)}
	}
	u := target.url // a copy for each request: nothing it is handed to can change the cached one
	req := (&http.Request{Method: http.MethodPost, URL: &u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: target.host, ContentLength: int64(len(body))}).WithContext(ctx)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req
}

// The values of the headers every request has, shared (len == cap).
var (
	contentTypeJSON = []string{"application/json"}
	userAgentHerald = []string{userAgent}
)

// sign is the X-Vendor-Signature of body: base64 (standard, padded) of HMAC-SHA1 keyed with
// secret.
func sign(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// webhookTarget finds the URL and secret of a webhook delivery: the notification's own, else
// the WEBHOOK integration's.
func webhookTarget(d channels.Delivery) (*parsedTarget, string, *channels.Failure) {
	target, secret := d.Notification.Field("webhookUrl"), d.Notification.Field("webhookSecret")
	if target == "" {
		target = Kind.IntegrationField(d, "url")
		if secret == "" {
			secret = Kind.IntegrationField(d, "secret")
		}
	}
	if target == "" {
		return nil, "", &channels.Failure{Reason: "no webhook URL: neither the notification nor a WEBHOOK integration sets one"}
	}
	t := targets.parse(target)
	if t == nil {
		return nil, "", &channels.Failure{Reason: "webhook URL is not an absolute http or https URL"}
	}
	return t, secret, nil
}

// parsedTarget is a webhook URL as parsed and checked once, with the Host header it gives.
type parsedTarget struct {
	url  url.URL
	host string
}

// targetCache keeps the webhook URLs parsed lately: a storm sends thousands of notices a
// second to the same few URLs. It is bounded (emptied when full) since URLs come and go with
// configurations; a URL that does not parse is not kept.
type targetCache struct {
	mu sync.RWMutex
	m  map[string]*parsedTarget
}

// targetsKept bounds the cache: far more than the webhooks a worker's storms reach at once.
const targetsKept = 1024

var targets = targetCache{m: map[string]*parsedTarget{}}

// parse is raw parsed and checked (nil: not an absolute http or https URL), from the cache if
// it holds it.
func (c *targetCache) parse(raw string) *parsedTarget {
	c.mu.RLock()
	t := c.m[raw]
	c.mu.RUnlock()
	if t != nil {
		return t
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil
	}
	t = &parsedTarget{url: *u, host: strings.TrimSuffix(u.Host, ":")}
	c.mu.Lock()
	if len(c.m) >= targetsKept {
		clear(c.m)
	}
	c.m[raw] = t
	c.mu.Unlock()
	return t
}

// Kind is WEBHOOK: a URL (user input: a private address is refused unless the operator
// allows it) and the secret that signs what is sent there, from the notification or its
// project's WEBHOOK integration. A stored secret is kept only while its URL stays on its host.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "WEBHOOK", Project: true, Global: true, Links: true, Queue: "deliveries-webhook", Priority: 4,
		Fields: []herald.KindField{
			{Name: "webhookUrl", Required: true, Mask: herald.MaskURL, Integration: "url", URL: true},
			{Name: "webhookSecret", Mask: herald.MaskAll, Target: "webhookUrl", Integration: "secret"},
		},
		Integration: &herald.IntegrationType{Name: "WEBHOOK", Fields: []herald.IntegrationField{
			{Name: "url", Required: true, Mask: herald.MaskURL, URL: true}, {Name: "secret", Mask: herald.MaskAll}}}},
	New: func(_ channels.Settings, client *http.Client) channels.Notifier { return Notifier{Client: client} },
}
