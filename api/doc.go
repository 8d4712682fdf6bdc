// Package api serves Herald's HTTP API: the alerts, events and administration endpoints under
// /api/public/v1.0 (docs/api.md), with Digest authentication, roles, paging, links, envelopes,
// masking and the error body of docs/api.md#errors. It also serves, without authentication,
// the API's OpenAPI 3 document (openapi.json, which tests hold to the route table) and a viewer
// of it at /api/docs (Redoc, embedded from docs/), and the pages of notices' action links
// under /act/ (act.go): HTML, with the link's signed token as the only credential, for its one
// alert and action, or for the alerts of one digest (actdigest.go); a GET only shows, the
// page's POST acts.
//
// Before authenticating, it refuses what a browser could be tricked into sending (guard.go:
// cross-site requests, bodies not declared JSON) and throttles failed authentications (auth.go,
// counters in the store). Bodies are read within their endpoint's limit and shape-checked or
// streamed before they are decoded (decode.go), so a request costs a small multiple of its size.
//
// Handlers only decode, authorize, call and encode: the rules of what is valid live in the
// domain (package herald), state lives in the store. This package must not hold state of its
// own beyond a request, nor know Redis keys, nor run background work; the alert engine and the
// senders never import it.
package api
