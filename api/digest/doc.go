// Package digest is the HTTP Digest access authentication (RFC 7616, RFC 2617) of the public
// API: algorithm MD5, qop=auth, realm "Public API".
//
// It owns the Digest challenge (the WWW-Authenticate value), issuing nonces and verifying them,
// parsing the Authorization header and checking the client's response digest. Nonces are
// stateless: each carries its issue time and random bytes, signed with an HMAC key shared by
// every API process, so any process can verify a nonce another one issued. A nonce older than
// the configured lifetime is reported stale so the client retries without asking the user again.
// Replays are refused through a NonceCounter that remembers the highest nonce count per nonce.
//
// It must not touch storage, roles or HTTP routing: user secrets come through the Credentials
// function (which yields only the HA1, never a private key in clear), the nonce counts through
// the NonceCounter interface (implemented elsewhere, on Redis), and deciding which role an
// endpoint needs, writing the 401 body or routing the request is the caller's job. It never
// logs, and its errors never carry a secret, an HA1 or a response digest. It imports only the
// standard library.
package digest
