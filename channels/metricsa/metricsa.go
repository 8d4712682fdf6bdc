package metricsa

import (
	"context"
	"net/http"

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
	key, err := Kind.Values(d, "metricsAApiKey")
	if err != nil {
		return err
	}
	a, err := channels.KeyedAlert(d)
	if err != nil {
		return err
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
	var ok bool
	if ev.AlertType, ok = channels.ForEvent(d.Event, "error", "success", "info"); !ok {
		return channels.NoEvent()
	}
	req, err := channels.PostJSON(ctx, "METRICS_A", channels.BaseURL(n.BaseURL, DefaultBaseURL)+"/api/v1/events", ev,
		"DD-API-KEY", key[0])
	if err != nil {
		return err
	}
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
