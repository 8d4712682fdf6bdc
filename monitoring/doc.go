// Package monitoring serves asynqmon, the web console of Herald's asynq queues, on the Redis
// Herald already uses. The API mounts it at /monitoring/ behind its Digest authentication, for
// callers with a global role; it is read-only unless the operator lets it change the queues.
package monitoring
