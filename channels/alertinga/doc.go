// Package alertinga sends deliveries of kind ALERTING_A: alerts of the alert-routing service's
// Alert API v2 (Opsgenie's), created and closed by alias, the alert id, so that the close of an
// alert closes what its open created (docs/decisions.md#deliveries).
//
// The service has one address per region: US (the default) and EU. The region is the
// notification's alertingARegion, else the ALERTING_A integration's region, else US. The key
// (the notification's alertingAApiKey, else the integration's apiKey) goes in the header
// "Authorization: GenieKey <key>".
//
// An open or repeat notice creates (the service folds a create with the alias of an open alert
// into that alert); a close or a cancellation closes; an acknowledgement acknowledges:
//
//	POST /v2/alerts HTTP/1.1
//	Authorization: GenieKey <key>
//	Content-Type: application/json
//
//	{"message":"OPEN HOST_DOWN: db1.example.com:27017","alias":"65a1...",
//	 "description":"Alert OPEN: HOST_DOWN\nProject: 5f0c...\n...","priority":"P1",
//	 "source":"Herald","tags":["herald","HOST_DOWN"],"entity":"db1.example.com:27017",
//	 "details":{"groupId":"5f0c...","alertConfigId":"65a1...","eventTypeName":"HOST_DOWN","status":"OPEN"}}
//
//	POST /v2/alerts/65a1.../close?identifierType=alias HTTP/1.1
//
//	{"source":"Herald","note":"Resolved at 2026-11-21T19:00:00Z"}
//
// The service answers 202 when it accepts a request (it processes it afterwards), 401/403 for a
// bad key, 422 or 400 for a request it cannot take (permanent), 429 when it throttles.
//
// Every alert is created with priority P1: Herald's alert configurations carry no severity, the
// user chose a paging route for this alert, and the PAGING and ALERTING_B senders send every
// alert as critical too; teams that want a metric threshold lower can remap by tag or event type
// in the service's own rules.
//
// BaseURL "" is https://api.opsgenie.com (HERALD_ALERTING_A_URL overrides it), EUBaseURL ""
// is https://api.eu.opsgenie.com (HERALD_ALERTING_A_EU_URL).
package alertinga
