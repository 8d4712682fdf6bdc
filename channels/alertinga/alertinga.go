package alertinga

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// The public addresses of the two regions.
const (
	DefaultBaseURL   = "https://api.opsgenie.com"    // US; HERALD_ALERTING_A_URL overrides it
	DefaultEUBaseURL = "https://api.eu.opsgenie.com" // EU; HERALD_ALERTING_A_EU_URL overrides it
)

// The service's limits, in characters.
const (
	maxMessage     = 130
	maxDescription = 15000
	maxEntity      = 512
	maxNote        = 25000
)

// Notifier sends ALERTING_A deliveries as Alert API v2 requests.
//
// Client nil means a client from channels.NewHTTPClient(false, 10s); BaseURL "" and EUBaseURL ""
// mean the public US and EU addresses.
type Notifier struct {
	Client    *http.Client
	BaseURL   string // region US
	EUBaseURL string // region EU
}

type createAlert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description"`
	Priority    string            `json:"priority"`
	Source      string            `json:"source"`
	Tags        []string          `json:"tags"`
	Entity      string            `json:"entity,omitempty"`
	Details     map[string]string `json:"details"`
}

type alertAction struct {
	Source string `json:"source"`
	User   string `json:"user,omitempty"`
	Note   string `json:"note"`
}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	key, region, err := credentials(d)
	if err != nil {
		return err
	}
	a, err := channels.KeyedAlert(d)
	if err != nil {
		return err
	}
	base := channels.BaseURL(n.BaseURL, DefaultBaseURL)
	if region == "EU" {
		base = channels.BaseURL(n.EUBaseURL, DefaultEUBaseURL)
	}

	var (
		target string
		body   any
	)
	byAlias := func(action string) string {
		return base + "/v2/alerts/" + url.PathEscape(a.ID) + "/" + action + "?identifierType=alias"
	}
	switch d.Event {
	case channels.EventOpen, channels.EventUpdate:
		target = base + "/v2/alerts"
		body = createAlert{
			Message:     channels.Truncate(channels.Title(a), maxMessage, "…"),
			Alias:       a.ID,
			Description: channels.Truncate(channels.Summary(a), maxDescription, "…"),
			Priority:    "P1",
			Source:      "Herald",
			Tags:        tags(a),
			Entity:      channels.Truncate(herald.Subject(a), maxEntity, "…"),
			Details: map[string]string{
				"groupId":       a.GroupID,
				"alertConfigId": a.AlertConfigID,
				"eventTypeName": a.EventTypeName,
				"status":        a.Status,
			},
		}
	case channels.EventClose:
		target = byAlias("close")
		body = alertAction{Source: "Herald", Note: "Resolved at " + when(a.Resolved, a.Updated)}
	case channels.EventCancel:
		// A cancelled alert will never close: close its alert rather than leave it open.
		target = byAlias("close")
		body = alertAction{Source: "Herald", Note: "Cancelled at " + when(a.Updated, a.Resolved)}
	case channels.EventAcknowledge:
		note := "Acknowledged"
		if !a.AcknowledgedUntil.IsZero() {
			note += " until " + a.AcknowledgedUntil.String()
		}
		if a.AcknowledgingUsername != "" {
			note += " by " + a.AcknowledgingUsername
		}
		if a.AcknowledgementComment != "" {
			note += ": " + a.AcknowledgementComment
		}
		target = byAlias("acknowledge")
		body = alertAction{Source: "Herald", User: a.AcknowledgingUsername, Note: channels.Truncate(note, maxNote, "…")}
	default:
		return channels.NoEvent()
	}
	req, err := channels.PostJSON(ctx, "ALERTING_A", target, body, "Authorization", "GenieKey "+key)
	if err != nil {
		return err
	}
	return channels.Send(n.Client, req)
}

// credentials finds the key and region of d: the notification's own, else the ALERTING_A
// integration's; the region defaults to US.
func credentials(d channels.Delivery) (key, region string, err error) {
	v, err := Kind.Values(d, "alertingAApiKey")
	if err != nil {
		return "", "", err
	}
	switch strings.ToUpper(strings.TrimSpace(Kind.Field(d, "alertingARegion"))) {
	case "", "US":
		return v[0], "US", nil
	case "EU":
		return v[0], "EU", nil
	}
	return "", "", &channels.Failure{Reason: "ALERTING_A region must be US or EU"}
}

func tags(a herald.Alert) []string {
	t := []string{"herald"}
	if a.EventTypeName != "" {
		t = append(t, a.EventTypeName)
	}
	return t
}

// when is the first set time of ts, in the API's form; "an unknown time" if none.
func when(ts ...herald.Time) string {
	for _, t := range ts {
		if !t.IsZero() {
			return t.String()
		}
	}
	return "an unknown time"
}

// Kind is ALERTING_A: an alert per alert, with an API key and a region (US or EU) from the
// notification or its project's ALERTING_A integration.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "ALERTING_A", Project: true, Queue: "deliveries-alerting_a", Priority: 6,
		Fields: []herald.KindField{
			{Name: "alertingAApiKey", Required: true, Mask: herald.MaskTail, Integration: "apiKey", Credential: true},
			{Name: "alertingARegion", Integration: "region", Default: "US", Check: herald.OneOf("US", "EU")},
		},
		Integration: &herald.IntegrationType{Name: "ALERTING_A", Fields: []herald.IntegrationField{
			{Name: "apiKey", Required: true, Mask: herald.MaskTail},
			{Name: "region", Default: "US", Check: herald.OneOf("US", "EU")},
		}}},
	Settings: []channels.Setting{
		{Flag: "alerting-a-url", Env: "HERALD_ALERTING_A_URL", Address: true, Help: "ALERTING_A service address, region US"},
		{Flag: "alerting-a-eu-url", Env: "HERALD_ALERTING_A_EU_URL", Address: true, Help: "ALERTING_A service address, region EU"},
	},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_ALERTING_A_URL"], EUBaseURL: s["HERALD_ALERTING_A_EU_URL"]}
	},
}
