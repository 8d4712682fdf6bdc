package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"

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
	body, err := json.Marshal(a)
	if err != nil {
		return &channels.Failure{Reason: "alert could not be encoded"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &channels.Failure{Reason: "webhook request could not be built"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set(headerEvent, string(d.Event))
	req.Header.Set(headerIdempotencyKey, d.ID)
	if secret != "" {
		req.Header.Set(headerSignature, sign(secret, body))
	}
	return channels.Send(n.Client, req)
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
func webhookTarget(d channels.Delivery) (target, secret string, f *channels.Failure) {
	n := d.Notification
	target, secret = n.WebhookURL, n.WebhookSecret
	if target == "" {
		if i := d.Integration; i != nil && (i.Type == "" || i.Type == "WEBHOOK") {
			target = i.URL
			if secret == "" {
				secret = i.Secret
			}
		}
	}
	if target == "" {
		return "", "", &channels.Failure{Reason: "no webhook URL: neither the notification nor a WEBHOOK integration sets one"}
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", &channels.Failure{Reason: "webhook URL is not an absolute http or https URL"}
	}
	return target, secret, nil
}
