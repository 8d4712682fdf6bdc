// Package sms sends SMS deliveries (and the fan-out of GROUP, ORG, USER and ADMIN
// notifications to people by text message) through the leading SMS gateway's REST API: Twilio's
// Messages resource.
//
// One delivery is one request:
//
//	POST {BaseURL}/2010-04-01/Accounts/{AccountSID}/Messages.json
//	Authorization: Basic base64(AccountSID:AuthToken)
//	Content-Type: application/x-www-form-urlencoded
//
//	To=%2B15551234567&From=%2B15557654321&Body=Herald+Open%3A+Host+down%3A+db1.example.com%3A27017%2C+since+03%3A12+UTC%2C+14+min%2C+project+prod+Reply+1+to+ack+1h%2C+4+for+4h
//
// To is Delivery.To, else the notification's mobileNumber, with the spaces, dots, dashes and
// parentheses people write in numbers taken out. The body is one line, in the words every
// people's notice uses (channels.NoticeOf: status, what, since or acknowledgement, where), that fits
// one segment (160 GSM 7-bit characters; any other character is sent as '?', since one would
// make the whole text UCS-2, 70 to a segment): "Herald Open: Host down: db1.example.com:27017,
// since 03:12 UTC, 14 min, project prod (organization Acme)".
// The gateway answers 201 Created for a message it queued.
//
// Reply codes. When the operator set action keys (Delivery.Links), the text of an open alert
// ends with "Reply 1 to ack 1h, 4 for 4h" and that of an acknowledged one with "Reply 0 to
// unack"; the text before the code is cut to leave it room. Once such a text is sent, Sent is
// told (cmd/herald keeps the number's last notice in the store, store/smsreplies.go), and the
// gateway's inbound webhook (POST /hooks/sms/inbound, api/hooks_sms.go) acts on a reply from
// that number.
//
// BaseURL "" is https://api.twilio.com; HERALD_SMS_URL overrides it, and HERALD_SMS_ACCOUNT,
// HERALD_SMS_TOKEN and HERALD_SMS_FROM give the account, its auth token and the sender number.
// The answer is classified by channels.Send (429 and 5xx retried, Retry-After honoured), except
// that a 401 or 403 is a permanent failure that is not Rejected: the gateway credentials are the
// operator's, not a notification's (see Notify).
package sms
