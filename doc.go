// Package herald holds Herald's domain: the resources of the alerts API (organizations,
// projects, API keys, users, alert configurations, alerts, maintenance windows, integrations,
// hosts, events), the enumerations the API document lists, the rules that validate them, the
// access rules of the roles, and the registry of delivery kinds (kinds.go): what each kind of
// notification is, declared once for validation, masking, fan-out, queues and senders.
//
// It owns what those things are and which values are allowed. It must not touch Redis, HTTP,
// asynq or any other adapter: everything here is plain data and pure functions over it, so the
// API, the store, the alert engine and the senders can all share it without depending on each
// other. It imports only the standard library.
package herald
