// Package alertingb sends deliveries of kind ALERTING_B: messages to the alert-routing
// service's REST endpoint integration (Splunk On-Call's, VictorOps'), routed by a
// routing key and keyed by entity_id, the alert id, so that the RECOVERY of an alert resolves
// the incident its CRITICAL opened (docs/decisions.md#deliveries).
//
// Every notice is one POST to {BaseURL}/integrations/generic/20131114/alert/{api key}/{routing
// key}, Content-Type application/json. The api key is the notification's alertingBApiKey, else
// the ALERTING_B integration's apiKey; the routing key the notification's alertingBRoutingKey,
// else the integration's routingKey. Both are required: without either nothing is sent. The api
// key is a secret in the URL's path, so no error or Failure from here holds the URL.
//
// An open or repeat notice is CRITICAL, a close or a cancellation RECOVERY, an acknowledgement
// ACKNOWLEDGEMENT:
//
//	POST /integrations/generic/20131114/alert/<api key>/<routing key> HTTP/1.1
//	Content-Type: application/json
//
//	{"message_type":"CRITICAL","entity_id":"65a1...",
//	 "entity_display_name":"OPEN HOST_DOWN: db1.example.com:27017",
//	 "state_message":"Alert OPEN: HOST_DOWN\nProject: 5f0c...\n...","state_start_time":1795286455,
//	 "monitoring_tool":"Herald","host_name":"db1.example.com:27017"}
//
// The service answers 200 {"result":"success","entity_id":"65a1..."}; a 200 with
// {"result":"failure","message":"..."} is a message it refused, a permanent failure. Other
// answers are classified as channels.Classify does.
//
// BaseURL "" is the public service, https://alert.victorops.com; the HERALD_ALERTING_B_URL
// setting overrides it (tests point it at a local receiver).
package alertingb
