// Package metricsa sends deliveries of kind METRICS_A: events of the metrics service's Events
// API v1 (Datadog's), posted with the key in a header and aggregated by the alert id, so that
// an alert's open, repeats and close show as one thread of events (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/api/v1/events with Content-Type application/json and the
// header DD-API-KEY: the notification's metricsAApiKey, else the METRICS_A integration's apiKey.
// An open or repeat notice is an "error" event, a close or a cancellation a "success" one, an
// acknowledgement an "info" one:
//
//	POST /api/v1/events HTTP/1.1
//	DD-API-KEY: <key>
//	Content-Type: application/json
//
//	{"title":"OPEN HOST_DOWN: db1.example.com:27017","text":"Alert OPEN: HOST_DOWN\n...",
//	 "alert_type":"error","aggregation_key":"65a1...","source_type_name":"herald",
//	 "date_happened":1795286455,"tags":["herald","event_type:HOST_DOWN","group:5f0c..."]}
//
// The service answers 202 when it accepts an event, 403 for a bad key, 400 for a malformed
// event (permanent), 429 when it throttles.
//
// BaseURL "" is the US1 site, https://api.datadoghq.com; the HERALD_METRICS_A_URL setting
// overrides it (another site, such as https://api.datadoghq.eu, or a local receiver in tests).
package metricsa
