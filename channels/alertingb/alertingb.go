package alertingb

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
)

// DefaultBaseURL is the public REST endpoint address (HERALD_ALERTING_B_URL overrides it).
const DefaultBaseURL = "https://alert.victorops.com"

// endpoint is the REST integration's path, before the api key and the routing key.
const endpoint = "/integrations/generic/20131114/alert/"

// maxReason bounds how much of the service's refusal message a Failure quotes.
const maxReason = 200

// Notifier sends ALERTING_B deliveries to the REST endpoint.
//
// Client nil means a client from channels.NewHTTPClient(false, 10s); BaseURL "" means
// DefaultBaseURL.
type Notifier struct {
	Client  *http.Client
	BaseURL string
}

type message struct {
	MessageType       string `json:"message_type"`
	EntityID          string `json:"entity_id"`
	EntityDisplayName string `json:"entity_display_name"`
	StateMessage      string `json:"state_message"`
	StateStartTime    int64  `json:"state_start_time,omitempty"`
	MonitoringTool    string `json:"monitoring_tool"`
	HostName          string `json:"host_name,omitempty"`
}

// answer is the service's reply to a message.
type answer struct {
	Result  string `json:"result"`
	Message string `json:"message"`
}

// Notify sends d. See Notifier.
func (n Notifier) Notify(ctx context.Context, d channels.Delivery) error {
	v, err := Kind.Values(d, "alertingBApiKey", "alertingBRoutingKey")
	if err != nil {
		return err
	}
	apiKey, routingKey := v[0], v[1]
	a, err := channels.KeyedAlert(d)
	if err != nil {
		return err
	}
	m := message{
		EntityID:          a.ID,
		EntityDisplayName: channels.Title(a),
		StateMessage:      channels.Summary(a),
		MonitoringTool:    "Herald",
		HostName:          herald.OneLine(a.HostnameAndPort),
	}
	if !a.Created.IsZero() {
		m.StateStartTime = a.Created.Unix()
	}
	var ok bool
	if m.MessageType, ok = channels.ForEvent(d.Event, "CRITICAL", "RECOVERY", "ACKNOWLEDGEMENT"); !ok {
		return channels.NoEvent()
	}
	// The errors of building and sending the request name the URL, and so the key: none of
	// them is returned as it is (PostJSON and channels.Classify write their own reasons).
	target := channels.BaseURL(n.BaseURL, DefaultBaseURL) + endpoint + url.PathEscape(apiKey) + "/" + url.PathEscape(routingKey)
	req, err := channels.PostJSON(ctx, "ALERTING_B", target, m)
	if err != nil {
		return err
	}
	return channels.Exchange(n.Client, req, checkAnswer(apiKey, routingKey))
}

// checkAnswer is the service's own signal on top of the status: a 200 whose result is
// "failure".
func checkAnswer(secrets ...string) func(*http.Response, []byte) error {
	return func(resp *http.Response, raw []byte) error {
		return resultFailure(resp, raw, secrets)
	}
}

func resultFailure(resp *http.Response, raw []byte, secrets []string) error {
	var ans answer
	if json.Unmarshal(raw, &ans) == nil && strings.EqualFold(ans.Result, "failure") {
		reason := "ALERTING_B refused the message"
		if msg := quote(ans.Message, secrets); msg != "" {
			reason += ": " + msg
		}
		return &channels.Failure{Status: resp.StatusCode, Reason: reason}
	}
	return nil
}

// quote makes the service's message fit a Reason: one line, short, and without the keys should
// the service echo them.
func quote(msg string, secrets []string) string {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
			if esc := url.PathEscape(s); esc != s {
				msg = strings.ReplaceAll(msg, esc, "***")
			}
		}
	}
	return channels.Truncate(herald.OneLine(msg), maxReason, "…")
}

// Kind is ALERTING_B: an API key and a routing key, from the notification or its project's
// ALERTING_B integration.
var Kind = channels.Kind{
	Kind: herald.Kind{Name: "ALERTING_B", Project: true, Queue: "deliveries-alerting_b", Priority: 6,
		Fields: []herald.KindField{
			{Name: "alertingBApiKey", Required: true, Mask: herald.MaskTail, Integration: "apiKey", Credential: true},
			{Name: "alertingBRoutingKey", Required: true, Integration: "routingKey"},
		},
		Integration: &herald.IntegrationType{Name: "ALERTING_B", Fields: []herald.IntegrationField{
			{Name: "apiKey", Required: true, Mask: herald.MaskTail}, {Name: "routingKey"}}}},
	Settings: []channels.Setting{{Flag: "alerting-b-url", Env: "HERALD_ALERTING_B_URL", Address: true, Help: "ALERTING_B service address"}},
	New: func(s channels.Settings, client *http.Client) channels.Notifier {
		return Notifier{Client: client, BaseURL: s["HERALD_ALERTING_B_URL"]}
	},
}
