// Package channels turns deliveries into the requests of the services that carry them: one
// notice about one alert, to one notification's target, becomes one HTTP request (or mail, or
// text message) in the protocol of that target's kind.
//
// Each kind has its own package below this one (webhook, chata, chatb, chatc, ...), with one
// small type with one Notify method: how the target is found (the notification's own fields,
// else the defaults of the project's integration of that kind), what the request looks like,
// and what the answer means. Beside it, its Kind declares the kind once: its fields, their
// checks and masks, its integration, its queue, its settings and how its sender is made from
// them; channels/registry lists every kind.
//
// This package holds only what the kinds share: the Kind they declare, the Delivery they are
// given, the Failure they return, the meaning of an HTTP answer (Classify: delivered,
// retryable, credentials refused, or permanent), the one Transport every HTTP sender goes out
// through (proxy, the operator's TLS files, and the refusal of internal addresses, since
// webhook and chat URLs are user input), Send, Summary, and the words of a notice meant for
// people (NoticeOf: the event type in words, the project by name, since when and for how
// long, the acknowledgement, the action links; text.go holds the words).
//
// It must not touch retries, backoff, scheduling, deduplication or storage: those are the
// dispatcher's, which calls Notify once per attempt with the same Delivery (and so the same
// idempotency key) and acts on the *Failure it gets back. Nothing here logs, and no error or
// Reason carries a secret or a target's full URL, so the dispatcher may record them as they are.
package channels
