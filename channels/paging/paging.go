package paging

import (
	"context"
	"net/http"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the public Events API v2 address (HERALD_PAGING_URL overrides it).
const DefaultBaseURL = "https://events.pagerduty.com"

// maxSummary is the longest summary the service takes.
const maxSummary = 1024

// Notifier sends PAGING deliveries as Events API v2 events.
//
// The key: the notification's serviceKey, else the PAGING integration's serviceKey. Client nil
// means a client from channels.NewHTTPClient(false, 10s); BaseURL "" means DefaultBaseURL.
type Notifier struct {
	Client  *http.Client
	BaseURL string
}

// event is an Events API v2 event.
type event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key"`
	Client      string   `json:"client,omitempty"`
	Payload     *payload `json:"payload,omitempty"`
}

type payload struct {
	Summary       string       `json:"summary"`
	Source        string       `json:"source"`
	Severity      string       `json:"severity"`
	Timestamp     string       `json:"timestamp,omitempty"`
	Class         string       `json:"class,omitempty"`
	Group         string       `json:"group,omitempty"`
	CustomDetails herald.Alert `json:"custom_details"`
}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	key, err := Kind.Values(d, "serviceKey")
	if err != nil {
		return err
	}
	a, err := channels.KeyedAlert(d)
	if err != nil {
		return err
	}
	action, ok := channels.ForEvent(d.Event, "trigger", "resolve", "acknowledge")
	if !ok {
		return channels.NoEvent()
	}
	ev := event{RoutingKey: key[0], EventAction: action, DedupKey: dedupKey(a)}
	if action == "trigger" {
		ev.Client = "Herald"
		a.HumanReadable = channels.Summary(a)
		ev.Payload = &payload{
			Summary:       channels.Truncate(channels.Title(a), maxSummary, "…"),
			Source:        source(a),
			Severity:      "critical",
			Class:         a.EventTypeName,
			Group:         a.GroupID,
			CustomDetails: a,
		}
		if !a.Created.IsZero() {
			ev.Payload.Timestamp = a.Created.String()
		}
	}
	req, err := channels.PostJSON(ctx, "PAGING", channels.BaseURL(n.BaseURL, DefaultBaseURL)+"/v2/enqueue", ev)
	if err != nil {
		return err
	}
	return channels.Send(n.Client, req)
}

// dedupKey is the incident's key: the alert's id, and for an alert from Prometheus its id and
// fingerprint ("<id>-<fingerprint>"), so that the incident names the Prometheus alert while a
// retried resolution of an earlier firing of the same label set can never resolve a newer one.
func dedupKey(a herald.Alert) string {
	if a.Fingerprint != "" {
		return a.ID + "-" + a.Fingerprint
	}
	return a.ID
}

// source is the payload's source, which the service requires: the host, replica set or
// cluster, else the project id.
func source(a herald.Alert) string {
	for _, s := range []string{a.Labels["instance"], a.Labels["job"], a.HostnameAndPort, a.ReplicaSetName, a.ClusterName, a.ClusterID, a.HostID, a.GroupID} {
		if s != "" {
			return herald.OneLine(s)
		}
	}
	return "Herald"
}

// Kind is PAGING: an incident per alert, keyed by the notification's serviceKey or its
// project's PAGING integration's.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "PAGING", Project: true, Global: true, Queue: "deliveries-paging", Priority: 6,
		Fields: []herald.KindField{{Name: "serviceKey", Required: true, Mask: herald.MaskTail, Integration: "serviceKey", Credential: true}},
		Integration: &herald.IntegrationType{Name: "PAGING", Fields: []herald.IntegrationField{
			{Name: "serviceKey", Required: true, Mask: herald.MaskTail}}}},
	Settings: []channels.Setting{{Flag: "paging-url", Env: "HERALD_PAGING_URL", Address: true,
		Help: "PAGING service address (default: the public one)"}},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_PAGING_URL"]}
	},
}
