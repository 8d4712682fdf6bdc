// Package actlink makes and checks the signed tokens of the links a notice carries, so that
// the person it reached can act on its alert (view it, acknowledge it, withdraw an
// acknowledgement) without an API key.
//
// A token names one alert, one action, the recipient the notice went to and an expiry, and
// is signed with HMAC-SHA256 under the operator's action keys (HERALD_ACTION_KEYS): the first
// key signs, every key verifies, so keys can be rotated. A token authenticates nothing else:
// it is never an API key and opens no other alert.
//
// The package is pure: no store, no clock of its own, no I/O. It must not touch alerts; the
// API acts on a verified token, and the dispatcher puts links into deliveries.
package actlink
