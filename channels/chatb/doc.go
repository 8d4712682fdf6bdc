// Package chatb sends deliveries of kind CHAT_B: messages of team chat service B, which speaks
// the Slack Web API, method chat.postMessage (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/api/chat.postMessage with the API token as a bearer token
// and a JSON body: the channel, a one-line fallback text (what notifications and old clients
// show) and blocks: a header saying what happened in words, fields (status, event type,
// target, project, since when, the acknowledgement), the alert's Summary, and the buttons of
// its action links. The words are the ones every people's notice uses (channels.NoticeOf).
// The text blocks are plain text, and the fallback has &, < and > escaped, so that what users
// wrote (host names, acknowledgement comments) cannot mention @channel or make links.
//
//	POST /api/chat.postMessage HTTP/1.1
//	Authorization: Bearer <apiToken>
//	Content-Type: application/json; charset=utf-8
//
//	{"channel":"#ops","text":"Alert opened: Host down: db1.example.com:27017, project prod (organization Acme)",
//	 "blocks":[{"type":"header","text":{"type":"plain_text","text":"Alert opened: Host down: db1.example.com:27017"}},
//	  {"type":"section","fields":[{"type":"plain_text","text":"Status: Open"},
//	   {"type":"plain_text","text":"Event type: HOST_DOWN"},
//	   {"type":"plain_text","text":"Target: db1.example.com:27017 (replica set rs0)"},
//	   {"type":"plain_text","text":"Project: prod (organization Acme)"},
//	   {"type":"plain_text","text":"When: Open since 03:12 UTC, 14 min"}]},
//	  {"type":"section","text":{"type":"plain_text","text":"Alert OPEN: HOST_DOWN\n...\nAlert ID: 65a1..."}},
//	  {"type":"actions","block_id":"herald_actions","elements":[
//	   {"type":"button","action_id":"acknowledge1h","text":{"type":"plain_text","text":"Acknowledge for 1 hour"},"style":"primary","value":"<token>"},
//	   {"type":"button","action_id":"acknowledge4h","text":{"type":"plain_text","text":"Acknowledge for 4 hours"},"value":"<token>"},
//	   {"type":"button","action_id":"view","text":{"type":"plain_text","text":"View the alert"},"url":"https://herald.example.com/act/<token>"}]}]}
//
// When the operator set action keys (Delivery.Links), a last block of buttons (block_id
// herald_actions) acts on the alert: acknowledge for 1 hour and for 4 hours (an open alert),
// withdraw the acknowledgement (an acknowledged one), each with its signed link's token as
// its value, and view, a URL button to the link's page; a resolution has view only. A click
// reaches the API's interactivity endpoint (POST /hooks/chat-b/actions, api/hooks_chatb.go),
// which checks the service's signature and the token, acts as the clicking user, and replaces
// the message to say so.
//
// A chat message cannot be closed: the resolution is a message of its own, which names the
// same alert (its id, in the Summary's last line) as the one its opening posted.
//
// The service answers HTTP 200 with {"ok": true, ...} when it posts the message and
// {"ok": false, "error": "<code>"} when it does not: a refused token (invalid_auth, not_authed,
// account_inactive, token_revoked, token_expired, no_permission, missing_scope) is Rejected;
// ratelimited (also HTTP 429 with Retry-After), fatal_error, internal_error,
// service_unavailable and request_timeout are retried; any other code (channel_not_found,
// not_in_channel, is_archived, msg_too_long, ...) is permanent. HTTP errors are classified as
// for every sender (channels.Classify).
//
// BaseURL "" is the public service, https://slack.com; the HERALD_CHAT_B_URL setting overrides
// it (tests point it at a local receiver).
package chatb
