// Package webhook sends deliveries of kind WEBHOOK: the alert, as the API shows it, posted as
// JSON to the notification's webhookUrl (or the WEBHOOK integration's url), signed with an
// HMAC-SHA1 of the body when there is a secret (docs/decisions.md#webhooks).
//
// A request looks like:
//
//	POST /hooks/herald HTTP/1.1
//	Content-Type: application/json
//	User-Agent: Herald
//	X-Vendor-Event: alert.open
//	X-Vendor-Signature: 3q2+7w...=
//	Idempotency-Key: dlv-0001
//
//	{"id":"65a1...","groupId":"5f0c...","eventTypeName":"HOST_DOWN","status":"OPEN",...,
//	 "humanReadable":"Alert OPEN: HOST_DOWN\n..."}
//
// There is no base URL to configure: the target is the user's URL, and so the client (by
// default channels.NewHTTPClient(false, 10s)) refuses private addresses unless the operator
// allows them.
package webhook
