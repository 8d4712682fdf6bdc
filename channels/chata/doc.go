// Package chata sends deliveries of kind CHAT_A: room notifications of team chat service A,
// which speaks the HipChat REST API v2 (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/v2/room/{room}/notification, the room name path-escaped,
// authenticated with the room's notification token as a bearer token, its body a message in
// the service's html format: red for an open alert and its repeat notices, green for its
// resolution (yellow for an acknowledgement, gray for a cancellation). The service answers 204
// when it posts it.
//
//	POST /v2/room/Ops%20Alerts/notification HTTP/1.1
//	Authorization: Bearer <notificationToken>
//	Content-Type: application/json
//
//	{"message":"<b>Alert opened: Host down: db1.example.com:27017 (replica set rs0)</b><br>Project: Orders (organization Acme)<br>Open since 18:40 UTC, 14 min<br><a href=\"https://herald.example.com/act/...\">Acknowledge for 1 hour</a> | ... | <a href=\"...\">View the alert</a><br><br>Alert OPEN: HOST_DOWN<br>...<br>Alert ID: 65a1...",
//	 "message_format":"html","color":"red","notify":true,"from":"Herald"}
//
// The words are channels.NoticeOf's, against the Notifier's clock; the links are the
// delivery's (none without action keys). Every text from the alert is HTML-escaped, so no field
// of an alert can add markup, a link, or a mention (the html format does not expand @mentions).
//
// A chat message cannot be closed: the resolution is a message of its own, which names the
// same alert (its id, in the last line) as the one its opening posted.
//
// BaseURL "" is the public service, https://api.hipchat.com; the HERALD_CHAT_A_URL setting
// overrides it (tests point it at a local receiver).
package chata
