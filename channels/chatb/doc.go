// Package chatb sends deliveries of kind CHAT_B: messages of team chat service B, which speaks
// the Slack Web API, method chat.postMessage (docs/decisions.md#deliveries).
//
// Every notice is one POST {BaseURL}/api/chat.postMessage with the API token as a bearer token
// and a JSON body: the channel, a one-line fallback text (what notifications and old clients
// show) and blocks (a header, the status, event type, target and project, and the alert's
// Summary). The blocks are plain text, and the fallback has &, < and > escaped, so that what
// users wrote (host names, acknowledgement comments) cannot mention @channel or make links.
//
//	POST /api/chat.postMessage HTTP/1.1
//	Authorization: Bearer <apiToken>
//	Content-Type: application/json; charset=utf-8
//
//	{"channel":"#ops","text":"Alert opened: HOST_DOWN on db1.example.com:27017",
//	 "blocks":[{"type":"header","text":{"type":"plain_text","text":"Alert opened: HOST_DOWN"}},
//	  {"type":"section","fields":[{"type":"plain_text","text":"Status: OPEN"},
//	   {"type":"plain_text","text":"Event type: HOST_DOWN"},
//	   {"type":"plain_text","text":"Target: db1.example.com:27017 (replica set rs0)"},
//	   {"type":"plain_text","text":"Project: 5f0c..."}]},
//	  {"type":"section","text":{"type":"plain_text","text":"Alert OPEN: HOST_DOWN\n...\nAlert ID: 65a1..."}}]}
//
// The project is named by its name and its organization's ("prod (Acme)"), else its id.
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
