// Package http1 is the HTTP/1.1 client transport of Herald's senders: a request is written by
// the calling goroutine in one write and its answer read by it, on connections kept per
// address.
//
// Why not net/http's Transport: it hands each request to two goroutines of its connection
// (one writes, one reads) and back over channels, with a cancellation context and its
// bookkeeping besides. In a storm that is most of a worker's CPU after the system calls:
// BenchmarkPost (64 senders posting 900 bytes each to a net/http server on loopback, client
// and server sharing two cores) takes 20.4 µs a request through net/http's Transport and
// 13.4 µs through this one. A webhook sender needs none of what that machinery buys (HTTP/2,
// proxies, 100-continue, connection sharing between requests in flight).
//
// What it keeps from net/http is its wire format: requests are written by http.Request.Write
// and answers read by http.ReadResponse, so headers, bodies, chunking and status lines are
// handled by the standard library. And its replay rule: a request sent on a kept connection
// that the server had closed meanwhile is sent again on a new one when net/http would (see
// RoundTrip).
//
// It owns connections and their reuse. It must not know what is sent (package channels) or
// which addresses may be reached (the caller's Dial refuses them).
package http1
