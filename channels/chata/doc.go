// Package chata sends deliveries of kind CHAT_A: room notifications of team chat service A,
// which speaks the HipChat REST API v2 (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/v2/room/{room}/notification, the room name path-escaped,
// authenticated with the room's notification token as a bearer token, its body a plain-text
// message: red for an open alert and its repeat notices, green for its resolution (yellow for
// an acknowledgement, gray for a cancellation). The service answers 204 when it posts it.
//
//	POST /v2/room/Ops%20Alerts/notification HTTP/1.1
//	Authorization: Bearer <notificationToken>
//	Content-Type: application/json
//
//	{"message":"Alert opened\nAlert OPEN: HOST_DOWN\nProject: 5f0c...\nHost: db1.example.com:27017\n...\nAlert ID: 65a1...",
//	 "message_format":"text","color":"red","notify":true,"from":"Herald"}
//
// A chat message cannot be closed: the resolution is a message of its own, which names the
// same alert (its id, in the last line) as the one its opening posted.
//
// BaseURL "" is the public service, https://api.hipchat.com; the HERALD_CHAT_A_URL setting
// overrides it (tests point it at a local receiver).
package chata
