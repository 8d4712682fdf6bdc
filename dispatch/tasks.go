package dispatch

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hibiken/asynq"
)

// Task types and the queues they run on.
const (
	TypeObservations = "herald:observations" // a project has observations waiting
	TypeTick         = "herald:tick"         // a project has alerts coming due
	TypeConfig       = "herald:config"       // a configuration changed: cancel what it opened
	TypeDelivery     = "herald:delivery"     // retry one delivery

	QueueEngine     = "engine"
	QueueDeliveries = "deliveries"
)

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
