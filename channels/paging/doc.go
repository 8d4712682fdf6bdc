// Package paging sends deliveries of kind PAGING: events of the on-call paging service's
// Events API v2 (PagerDuty's), keyed by the alert id so that the resolve of an alert closes the
// incident its trigger opened (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/v2/enqueue with Content-Type application/json and no
// authentication header: the integration key travels in the body as routing_key. An open or
// repeat notice triggers (a repeat with the same dedup_key adds to the open incident rather
// than opening another); a close or a cancellation resolves; an acknowledgement acknowledges.
//
//	POST /v2/enqueue HTTP/1.1
//	Content-Type: application/json
//
//	{"routing_key":"<serviceKey>","event_action":"trigger","dedup_key":"65a1...","client":"Herald",
//	 "payload":{"summary":"OPEN HOST_DOWN: db1.example.com:27017","source":"db1.example.com:27017",
//	  "severity":"critical","timestamp":"2026-11-21T18:40:55Z","class":"HOST_DOWN",
//	  "group":"5f0c...","custom_details":{"id":"65a1...","status":"OPEN",...}}}
//
//	{"routing_key":"<serviceKey>","event_action":"resolve","dedup_key":"65a1..."}
//
// The service answers 202 when it accepts an event, 400 for a malformed one (permanent), 429
// when it throttles (retried) and 5xx when it fails (retried).
//
// BaseURL "" is the public service, https://events.pagerduty.com; the HERALD_PAGING_URL
// setting overrides it (tests point it at a local receiver).
package paging
