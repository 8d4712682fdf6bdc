package metricsa

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the public Events API address (HERALD_METRICS_A_URL overrides it).
const DefaultBaseURL = "https://api.datadoghq.com"

// The service's limits, in characters.
const (
	maxTitle = 100
	maxText  = 4000
)

// Notifier sends METRICS_A deliveries as Events API v1 events.
//
// Client nil means a client from channels.NewHTTPClient(false, 10s); BaseURL "" means
// DefaultBaseURL.
type Notifier struct {
	Client  *http.Client
	BaseURL string
}

type event struct {
	Title          string   `json:"title"`
	Text           string   `json:"text"`
	AlertType      string   `json:"alert_type"`
	AggregationKey string   `json:"aggregation_key"`
	SourceTypeName string   `json:"source_type_name"`
	DateHappened   int64    `json:"date_happened,omitempty"`
	Tags           []string `json:"tags"`
}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	key := Kind.Field(d, "metricsAApiKey")
	if key == "" {
		return &channels.Failure{Reason: "no API key: neither the notification nor a METRICS_A integration sets one"}
	}
	a := d.Alert
	if a.ID == "" {
		return &channels.Failure{Reason: "alert has no id"}
	}
	ev := event{
		Title:          channels.Truncate(channels.Title(a), maxTitle, "…"),
		Text:           channels.Truncate(channels.Summary(a), maxText, "…"),
		AggregationKey: a.ID,
		SourceTypeName: "herald",
		Tags:           []string{"herald"},
	}
	if a.EventTypeName != "" {
		ev.Tags = append(ev.Tags, "event_type:"+a.EventTypeName)
	}
	if a.GroupID != "" {
		ev.Tags = append(ev.Tags, "group:"+a.GroupID)
	}
	switch {
	case !a.Updated.IsZero():
		ev.DateHappened = a.Updated.Unix()
	case !a.Created.IsZero():
		ev.DateHappened = a.Created.Unix()
	}
	switch d.Event {
	case channels.EventOpen, channels.EventUpdate:
		ev.AlertType = "error"
	case channels.EventClose, channels.EventCancel:
		// A cancelled alert will never close: end its thread rather than leave it in error.
		ev.AlertType = "success"
	case channels.EventAcknowledge:
		ev.AlertType = "info"
	default:
		return &channels.Failure{Reason: "delivery has no known event"}
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return &channels.Failure{Reason: "METRICS_A event could not be encoded"}
	}
	base := n.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+"/api/v1/events", bytes.NewReader(body))
	if err != nil {
		return &channels.Failure{Reason: "METRICS_A request could not be built"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald")
	req.Header.Set("DD-API-KEY", key)
	return channels.Send(n.Client, req)
}

// Kind is METRICS_A: an event per notice, with the API key of the notification or of its
// project's METRICS_A integration.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "METRICS_A", Project: true, Queue: "deliveries-metrics_a", Priority: 2,
		Fields: []herald.KindField{{Name: "metricsAApiKey", Required: true, Mask: herald.MaskTail, Integration: "apiKey", Credential: true}},
		Integration: &herald.IntegrationType{Name: "METRICS_A", Fields: []herald.IntegrationField{
			{Name: "apiKey", Required: true, Mask: herald.MaskTail}}}},
	Settings: []channels.Setting{{Flag: "metrics-a-url", Env: "HERALD_METRICS_A_URL", Address: true, Help: "METRICS_A service address"}},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_METRICS_A_URL"]}
	},
}
