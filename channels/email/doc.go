// Package email sends EMAIL deliveries (and the fan-out of GROUP, ORG, USER and ADMIN
// notifications to people by email) over SMTP, with the standard library's net/smtp as the
// client.
//
// One delivery is one SMTP conversation with the operator's server (HERALD_SMTP_ADDR,
// host:port): EHLO, STARTTLS whenever the server offers it, AUTH PLAIN when a username is
// configured (HERALD_SMTP_USERNAME, HERALD_SMTP_PASSWORD) and only over TLS or to localhost,
// MAIL FROM the configured sender (HERALD_SMTP_FROM), RCPT TO the delivery's recipient
// (Delivery.To, else the notification's emailAddress), DATA, QUIT. The whole conversation has
// one deadline (Config.Timeout, 30s by default). A notice is multipart/alternative: a plain
// part and an HTML part saying the same. It looks like:
//
//	From: herald@example.com
//	To: <ops@example.com>
//	Subject: [Herald] Open: Host down: db1.example.com:27017 (replica set rs0), project Orders (organization Acme)
//	Date: Sat, 21 Nov 2026 18:55:00 +0000
//	Message-ID: <65a1b2c3d4e5f60718293a4c-0-1@herald>
//	MIME-Version: 1.0
//	Auto-Submitted: auto-generated
//	Content-Type: multipart/alternative; boundary=...
//
//	--...
//	Content-Type: text/plain; charset=utf-8
//	Content-Transfer-Encoding: 7bit
//
//	Alert opened: Host down: db1.example.com:27017 (replica set rs0)
//	Project: Orders (organization Acme)
//	Open since 18:40 UTC, 14 min
//
//	Acknowledge for 1 hour: https://herald.example.com/act/...
//	Acknowledge for 4 hours: https://herald.example.com/act/...
//	View the alert: https://herald.example.com/act/...
//
//	Alert OPEN: HOST_DOWN
//	Project: 5f0c1d2e3f4a5b6c7d8e9f00
//	Host: db1.example.com:27017
//	...
//	--...
//	Content-Type: text/html; charset=utf-8
//	...
//
// The words are channels.NoticeOf's (the project and organization by name, the event type in
// words, since when and for how long against the Notifier's clock, the acknowledgement), then
// the delivery's links (none when the operator set no action keys), then channels.Summary of
// the alert. The HTML part says the same with the links as buttons: html/template, inline
// styles only, no image, no script, nothing fetched. The Message-ID is made from the
// delivery's id, so every retry of one delivery carries the same one and a receiving system
// can drop duplicates. A message that is not about an alert (Message) is plain text alone.
//
// Outcomes: connection errors, timeouts and 4xx replies are retried; 5xx replies are
// permanent, with the reply code in Failure.Status; a missing server address, sender or
// recipient, or a recipient with a line break in it, fails permanently without connecting. The
// SMTP credentials are the operator's, not a notification's, so a refused AUTH is permanent but
// never Rejected (Rejected makes the dispatcher remove a user's token). No Reason carries the
// password or the server's answer to AUTH.
package email
