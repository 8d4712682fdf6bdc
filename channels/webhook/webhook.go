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

	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/internal/alertjson"
	"github.com/heraldhq/herald/internal/jsonfield"
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
// plus `humanReadable` (channels.Summary), X-Vendor-Event the delivery's event,
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
	body, err := alertjson.Append(make([]byte, 0, 1024), &a, marshalled)
	if err != nil {
		return &channels.Failure{Reason: "alert could not be encoded"}
	}
	return channels.Send(n.Client, request(ctx, target, body, d, secret))
}

// marshalled writes the body as json.Marshal writes the alert (HTML characters escaped), by
// hand for most of it (alertjson): a storm posts thousands a second, and encoding/json's
// reflection was some 5 % of a worker's CPU.
var marshalled = jsonfield.Writer{Marshal: json.Marshal, EscapeHTML: true}

// request is the POST of body to target, built from the URL webhookTarget parsed (rather than
// parsing it again) with its headers set directly under their canonical names: a storm sends
// many thousands a second.
func request(ctx context.Context, target *url.URL, body []byte, d channels.Delivery, secret string) *http.Request {
	h := http.Header{
		"Content-Type":       {"application/json"},
		"User-Agent":         {userAgent},
		headerEvent:          {string(d.Event)},
		headerIdempotencyKey: {d.ID},
	}
	if secret != "" {
		h[headerSignature] = []string{sign(secret, body)}
	}
	req := (&http.Request{Method: http.MethodPost, URL: target, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Host: strings.TrimSuffix(target.Host, ":"), ContentLength: int64(len(body))}).WithContext(ctx)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req
}

// sign is the X-Vendor-Signature of body: base64 (standard, padded) of HMAC-SHA1 keyed with
// secret.
func sign(secret string, body []byte) string {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// webhookTarget finds the URL and secret of a webhook delivery: the notification's own, else
// the WEBHOOK integration's.
func webhookTarget(d channels.Delivery) (*url.URL, string, *channels.Failure) {
	n := d.Notification
	target, secret := n.WebhookURL, n.WebhookSecret
	if target == "" {
		if i := d.Integration; i != nil && (i.Type == "" || i.Type == "WEBHOOK") {
			target = i.URL
			if secret == "" {
				secret = i.Secret
			}
		}
	}
	if target == "" {
		return nil, "", &channels.Failure{Reason: "no webhook URL: neither the notification nor a WEBHOOK integration sets one"}
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, "", &channels.Failure{Reason: "webhook URL is not an absolute http or https URL"}
	}
	return u, secret, nil
}
