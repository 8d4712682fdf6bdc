package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/hibiken/asynq"

	"github.com/heraldhq/herald"
)

// Task types and the queues they run on.
const (
	TypeObservations = "herald:observations" // a project has observations waiting
	TypeTick         = "herald:tick"         // a project has alerts coming due
	TypeConfig       = "herald:config"       // a configuration changed: cancel what it opened
	TypeDelivery     = "herald:delivery"     // retry one delivery
	TypeOwnersTold   = "herald:owners"       // email a project's owners that a refused credential was removed

	QueueEngine = "engine"
)

// taskTypes are the task types a worker serves, each with its handler (Worker.Start
// registers them) and how a failed try of it is retried (retryDelay): one table, so that no
// type is queued that no worker serves or retries as it should.
var taskTypes = map[string]taskType{
	TypeObservations: {(*Engine).projectTask, retrySoon},
	TypeTick:         {(*Engine).projectTask, retrySoon},
	TypeConfig:       {(*Engine).configTask, retrySoon},
	TypeDelivery:     {(*Engine).deliverTask, retryBackingOff},
	TypeOwnersTold:   {(*Engine).ownersTask, retryBackingOff},
}

// taskType is how a worker runs a task type and retries it.
type taskType struct {
	handle func(*Engine, context.Context, *asynq.Task) error
	retry  retryKind
}

// retryKind is how a task type's failed tries are retried.
type retryKind int

const (
	// retryBackingOff: a target failed (a service, a mail server): backing off exponentially
	// from a second, as far as 10 minutes, and honouring a Retry-After.
	retryBackingOff retryKind = iota
	// retrySoon: a project's work, failed for a busy lease or a store error: again within
	// 100 ms × the tries, at most 2 s.
	retrySoon
)

// DeliveryQueue is the queue retries of a notification typeName (or EMAIL/SMS, a person's
// means) wait in, as the registry of kinds declares it: one per kind, so that a slow or
// failing service cannot hold up the others. A notice of no known kind (its configuration
// gone) is dropped when tried; the WEBHOOK queue, which every worker serves by default, takes it.
func DeliveryQueue(typeName string) string {
	k, ok := herald.LookupKind(typeName)
	if !ok {
		k, _ = herald.LookupKind("WEBHOOK")
	}
	return k.Queue
}

// DeliveryQueues are the queues of every kind, from the registry: where retries and dead
// letters wait.
func DeliveryQueues() []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range herald.Kinds() {
		if !seen[k.Queue] {
			seen[k.Queue] = true
			out = append(out, k.Queue)
		}
	}
	sort.Strings(out)
	return out
}

// DefaultQueues are the worker's queues and their priorities: the engine first, then each
// kind's queue with its priority from the registry (paging and alert routing before chat,
// webhooks and mail).
func DefaultQueues() map[string]int {
	queues := map[string]int{QueueEngine: 12}
	for _, k := range herald.Kinds() {
		queues[k.Queue] = k.Priority
	}
	return queues
}

// projectTask is the payload of the engine's tasks: ids only, never secrets (Redis and
// asynqmon show payloads).
type projectTask struct {
	GroupID  string    `json:"groupId"`
	ConfigID string    `json:"configId,omitempty"`
	Global   bool      `json:"global,omitempty"`
	Before   time.Time `json:"before,omitempty"` // TypeConfig: alerts detected before this
}

// deliveryTask names one delivery to retry.
type deliveryTask struct {
	GroupID      string `json:"groupId"`
	Global       bool   `json:"global,omitempty"`
	AlertID      string `json:"alertId"`
	ConfigID     string `json:"configId"`
	Notification int    `json:"notification"`
	Event        string `json:"event"`
	DeliveryID   string `json:"deliveryId"`
	// One person of a notification that fans out to people, on a retry: the user, and EMAIL or
	// SMS. Empty: the notification's one target (or, first time round, all its people).
	UserID string `json:"userId,omitempty"`
	Via    string `json:"via,omitempty"`
	// Fingerprint is the notification's (herald.Notification.Fingerprint) when the notice was
	// decided: a try after the notification was edited is superseded.
	Fingerprint string `json:"fp,omitempty"`
	// DeadLetter, on a task queued to be archived at once, is why the delivery failed for good
	// (a permanent failure on its first try); replayed, the task is tried as any other.
	DeadLetter string `json:"deadLetter,omitempty"`
	// Line is the digest line of the delivery's target (digest.go) once it went through it: a
	// retry looks there first, for a digest that claimed it.
	Line string `json:"line,omitempty"`
	// Digest, set, makes the task a digest's (its id): it tells of every notice its claim in
	// Line holds, as one message; the rest of the task names the notice that claimed them.
	Digest string `json:"digest,omitempty"`
}

// ownersTask names the event of a removed credential (EventCredentialRejected) whose
// project's owners are to be emailed. It is queued before the removal, so that no crash
// falls between the removal and the owners' notice: it waits for the event, which the removal
// records, and ends without a word if the event never comes (that removal did not happen,
// or another refusal's did it).
type ownersTask struct {
	GroupID string    `json:"groupId"`          // the project whose owners are told
	Global  bool      `json:"global,omitempty"` // the event is a global configuration's (no project's)
	EventID string    `json:"eventId"`
	Queued  time.Time `json:"queued"`
}

func newTask(typ string, payload any, opts ...asynq.Option) *asynq.Task {
	b, err := json.Marshal(payload)
	if err != nil {
		panic(fmt.Sprintf("dispatch: encode %s payload: %v", typ, err)) // plain structs: cannot fail
	}
	return asynq.NewTask(typ, b, opts...)
}

// tickID is the deterministic id of the tick of a project at a second.
func tickID(groupID string, at time.Time) string {
	return fmt.Sprintf("tick:%s:%d", groupID, at.Unix())
}
