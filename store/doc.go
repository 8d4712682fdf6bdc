// Package store keeps Herald's state in Redis (go-redis/v9): every key name, every index and
// every Lua script lives here, and nowhere else.
//
// Layout. Each document is a JSON string at its own key (alerts and events in a compact form,
// events as fields of one hash per scope: docs.go, keys.go, events.go; a project's hosts as
// fields of one hash: hosts.go); lists page from sorted-set indexes (ZRANGEBYSCORE with LIMIT,
// scored by a time), never by loading a collection, and a list of several indexes (all alerts,
// all events) merges them page by page (listMerged). The indexes of alerts and events, and
// the engine's due sets, list items by their ids' 12 bytes (keys.go), and an alert's or event's
// document leaves out what its key or hash field says (its id, its project): every open alert
// has several of each, and bytes per open alert are what a storm costs. Keys carry a
// Redis Cluster hash tag: everything of one project shares {g:<id>}, so a project's writes
// (a configuration, its indexes and its audit event) commit in one MULTI on one slot; global
// state shares {global}, API keys {keys}, users {users}, an organization's events {o:<id>},
// the counters of failed authentications {authfail} (one script reads or bumps a request's
// three counters at once), the signed callbacks of chat and SMS services already taken
// {callback} (callbacks.go), the last notice texted to a number {sms:<number>}
// (smsreplies.go), and each paced target's bucket {pace:<kind>:<target hash>} (pace.go),
// beside which its digest lines live (digestline.go).
// The engine's kicks (kicks.go) are a pub/sub channel, not a key: any worker may listen.
// The few writes that must cross slots (registering a new project in the global index) are
// ordered so that a crash between them leaves nothing a reader can trip on.
// Projects are listed in the index of all projects and in their organization's (both on
// {global}, written in one MULTI; lists.go); the organizations' indexes are built once from
// the index of all projects for a store written before they existed.
//
// Round trips. The reads every API request makes (a kept caller's authentication check and
// the endpoint's read, CheckAuth and Fetch) go to Redis in round trips shared by the callers
// waiting at the same moment (shared.go): one pipeline for dozens of requests under load, each
// command keeping its own reply and error.
//
// The store must not know HTTP or roles: it stores and finds domain values (package herald)
// and reports missing ones as herald not-found errors.
package store
