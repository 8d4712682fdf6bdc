// Package metrics is what Herald tells Prometheus: its own registry (with the Go runtime's and
// the process's collectors), served in the exposition format at /metrics — by the API on its
// own port, and by workers and schedulers on HERALD_METRICS_LISTEN.
//
// A process's own instruments (Metrics), observed as things happen:
//
//	herald_api_requests_total{route, method, code}    counter: API requests answered
//	herald_api_request_duration_seconds{route, method} histogram
//	herald_deliveries_total{kind, outcome}            counter: delivery attempts
//	herald_delivery_duration_seconds{kind}            histogram: one attempt
//	herald_paced_total{kind}                          counter: notices that waited for their target's slot
//	herald_schedule_lateness_seconds{task}            histogram: due time to start
//	herald_tasks_reclaimed_total{outcome}             counter: dead workers' tasks (workers)
//	herald_task_reclaim_errors_total                  counter: failed runs of the reclaimer
//	herald_scheduler_runs_total{job, outcome}         counter: scheduler job runs: ok, failed, interrupted (schedulers)
//	herald_engine_errors_total{what}                  counter: what the engine could not do, unseen by any caller
//
// route is the API's route pattern ("/api/public/v1.0/groups/{groupId}/alerts"), never the
// requested path, so ids never become label values; requests that matched no route count as
// route="unmatched" (a request refused by authentication counts under the route it asked
// for). method is the request's, for every route (HTTP's own methods; any other is "other").
// kind is the sender a delivery went through: a notification typeName (WEBHOOK, PAGING, ...),
// or EMAIL or SMS for the kinds that reach people (a notice of those that reached nobody counts
// as failed under its notification's typeName, GROUP say, and is a dead letter); outcome is
// the attempt's outcome in lower case (delivered, retrying, rejected, failed: an attempt that
// ends a retry task's last try is counted as retrying, and the dead letter it leaves shows in
// herald_queue_size{state="archived"}). Every kind × outcome series, and every kind's
// duration, exists at zero from the start, so that rate() and alerts on absence work before
// the first delivery. task is "alert" for an alert's step (when a session
// claimed it, after its due time) or the scheduler job (reconcile, retention). A worker hands
// back to their queue the tasks whose worker died under them (their lease ran out): requeued,
// or left once a task was reclaimed too often (asynq's recoverer then counts it as a failed
// try, and archives it once its retries are spent).
//
// The installation's gauges (Cluster), read from Redis at most once per MaxAge (5 s) per
// process, one reading shared by concurrent scrapes (/metrics needs no credentials, so scrapes
// must not be able to load Redis):
//
//	herald_open_alerts{scope, status}  project or global; tracking or open
//	herald_queue_size{queue, state}    pending, active, scheduled, retry, archived
//
// They are the same from every process that serves them (the API and the schedulers; the
// workers, which scale out, do not), so aggregate them with max(). A scrape reads two ZCARDs
// per project, 500 projects a round trip, and one asynq summary per queue: its cost grows with
// the number of projects and queues, never with the number of alerts or tasks.
//
// No label takes user input or a secret: routes, kinds, outcomes, queues and states are
// Herald's own fixed sets.
//
// The Grafana dashboard and the alerting rules in deploy/ read these names and labels;
// cmd/herald's TestDashboardAndRulesAgainstHerald fails when one of theirs is not exported.
//
// It owns the metric names and labels. It must not be imported by the engine (package
// dispatch reports through its Observer interface) nor decide anything.
package metrics
