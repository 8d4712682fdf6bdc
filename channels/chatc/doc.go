// Package chatc sends deliveries of kind CHAT_C: cards posted to an incoming webhook of team
// chat service C, which speaks the Microsoft Teams incoming-webhook protocol (Office 365
// connector MessageCard) (docs/decisions.md#deliveries).
//
// Every notice is one POST of a MessageCard to the notification's chatCWebhookUrl (else the
// CHAT_C integration's): red for an open alert and its repeat notices, green for its
// resolution (amber for an acknowledgement, gray for a cancellation).
//
//	POST /webhookb2/<secret path> HTTP/1.1
//	Content-Type: application/json
//
//	{"@type":"MessageCard","@context":"https://schema.org/extensions",
//	 "summary":"Alert opened: Host down: db1.example.com:27017 (replica set rs0)",
//	 "themeColor":"D7000C","title":"Alert opened: Host down: db1.example.com:27017 \\(replica set rs0\\)",
//	 "sections":[{"activityTitle":"Host down: db1.example.com:27017 (replica set rs0)",
//	  "facts":[{"name":"Status","value":"Open"},{"name":"Event type","value":"HOST_DOWN"},
//	   {"name":"Target","value":"db1.example.com:27017 (replica set rs0)"},
//	   {"name":"Project","value":"Orders (organization Acme)"},
//	   {"name":"When","value":"Open since 18:40 UTC, 14 min"},{"name":"Created","value":"2026-11-21T18:40:55Z"}],
//	  "text":"Alert OPEN: HOST_DOWN\n...\nAlert ID: 65a1...","markdown":false}],
//	 "potentialAction":[{"@type":"OpenUri","name":"Acknowledge for 1 hour","targets":[{"os":"default","uri":"https://herald.example.com/act/..."}]},
//	  ...,{"@type":"OpenUri","name":"View the alert","targets":[{"os":"default","uri":"https://herald.example.com/act/..."}]}]}
//
// The words are channels.NoticeOf's, against the Notifier's clock; each link the delivery
// offers is a button (an OpenUri action), and there are none without action keys. The section
// is not Markdown, so the alert's fields show as they are; the card's title, which the service
// reads as Markdown whatever the section says, has its Markdown characters escaped, so that no
// field of an alert can make a link or formatting there.
//
// A card cannot be closed: the resolution is a card of its own, which names the same alert (its
// id, in the Summary's last line) as the one its opening posted.
//
// The service answers 200 with the body "1" when it posts the card (a workflow webhook answers
// 202). It may also answer 200 with an error text instead of "1": one that reports the
// service's own 429 is retried, any other is permanent. Other statuses are classified as for
// every sender (channels.Classify).
//
// The URL is user input and a secret (whoever has it can post): the client refuses private
// addresses unless the operator allows them, and no error or Reason names it. There is no
// base-URL setting: the notification carries the whole URL.
package chatc
