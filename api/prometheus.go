package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"strconv"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// The Alertmanager front door (docs/api.md#prometheus-and-amtool): the subset of Alertmanager's
// API v2 that Prometheus and amtool use, under PrometheusPath/groups/{groupId} (Prometheus'
// alertmanagers[].path_prefix and amtool's --alertmanager.url take it). Its routes are in the
// route table like every other, at paths outside BasePath; it answers in Alertmanager's shapes
// on success and with Herald's error body otherwise. Besides Digest, it takes HTTP Basic with
// an API key (api/basic.go).

// PrometheusPath is where the front door's routes live, outside BasePath.
const PrometheusPath = "/prometheus"

// maxAlertsPerRequest bounds one POST /api/v2/alerts: Prometheus sends at most 64 a request
// (its notifier's batch), amtool one.
const maxAlertsPerRequest = 5000

// maxListedAlerts bounds what GET /api/v2/alerts reads and answers (Alertmanager's listing is
// unpaged): a project's active alerts beyond it are not listed.
const maxListedAlerts = 100_000

// bare answers v as it is (Alertmanager's shapes have no links), or only status when v is nil.
func bare(v any) reply { return reply{status: http.StatusOK, one: v, bare: true} }

// POST /prometheus/groups/{groupId}/api/v2/alerts: Prometheus' alerts, each a PROMETHEUS_ALERT
// observation, validated whole and queued through the same call as POST observations.
// Alertmanager answers 200 with no body.
func (s *Server) amPostAlerts(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	var obs []herald.Observation
	_, err = decodeItems(c, maxAlertsPerRequest, func(a herald.PostableAlert, i int) error {
		if err := a.CheckTimes(i, c.now); err != nil {
			return err
		}
		o := a.Observation(c.now)
		if err := o.Validate(i); err != nil {
			return err
		}
		obs = append(obs, o)
		return nil
	})
	if err != nil {
		return reply{}, err
	}
	if obs, err = s.watchdog(c.ctx, p.ID, obs); err != nil {
		return reply{}, err
	}
	if len(obs) == 0 {
		return bare(nil), nil // Alertmanager takes an empty list
	}
	batch, err := json.Marshal(obs)
	if err != nil {
		return reply{}, err
	}
	// Queued durably before the 200: what Prometheus was told was taken is never lost.
	if err := s.engine.Observe(c.ctx, p.ID, batch); err != nil {
		return reply{}, err
	}
	return bare(nil), nil
}

// GET /prometheus/groups/{groupId}/api/v2/alerts: the project's active Prometheus alerts, and
// those no configuration took that have not ended (unrouted), that the filter matchers and the
// state booleans select.
func (s *Server) amListAlerts(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	q, err := alertQuery(c.r.URL.Query())
	if err != nil {
		return reply{}, err
	}
	var alerts []herald.Alert
	for _, status := range []string{herald.StatusOpen, herald.StatusTracking} {
		for off := 0; len(alerts) < maxListedAlerts; {
			page, total, err := s.store.Alerts(c.ctx, p.ID, store.AlertFilter{Status: status}, store.Page{Offset: off, Limit: 1000})
			if err != nil {
				return reply{}, err
			}
			alerts = append(alerts, page...)
			if off += len(page); len(page) == 0 || off >= total {
				break
			}
		}
	}
	unrouted, err := s.store.UnroutedAlerts(c.ctx, p.ID, c.now, herald.MaxUnroutedAlerts)
	if err != nil {
		return reply{}, err
	}
	windows, err := s.silenceWindows(c, p)
	if err != nil {
		return reply{}, err
	}
	return bare(herald.GettableAlerts(alerts, unrouted, windows, q, c.now)), nil
}

// alertQuery reads GET /api/v2/alerts' query: filter (repeated, Alertmanager's matcher syntax),
// receiver (a regular expression), and the booleans active, silenced, inhibited, unprocessed
// (true unless given false; Herald inhibits nothing and processes every alert it lists).
func alertQuery(q url.Values) (herald.AlertQuery, error) {
	out := herald.AlertQuery{Active: true, Silenced: true}
	for _, name := range []string{"active", "silenced", "inhibited", "unprocessed"} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return out, herald.Invalid(herald.CodeInvalidQueryParameter, name, "Query parameter %s must be true or false.", name)
		}
		switch name {
		case "active":
			out.Active = b
		case "silenced":
			out.Silenced = b
		}
	}
	filter, err := filterMatchers(q)
	if err != nil {
		return out, err
	}
	out.Filter = filter
	if r := q.Get("receiver"); r != "" {
		re, err := regexp.Compile("^(?:" + r + ")$")
		if err != nil {
			return out, herald.Invalid(herald.CodeInvalidQueryParameter, "receiver", "Query parameter receiver is not a regular expression: %v", err)
		}
		out.Receiver = re
	}
	return out, nil
}

// filterMatchers reads the repeated filter query parameter: each one matcher, as Alertmanager
// reads it.
func filterMatchers(q url.Values) ([]herald.LabelMatcher, error) {
	var out []herald.LabelMatcher
	for _, f := range q["filter"] {
		m, err := herald.ParseLabelMatcher(f)
		if err != nil {
			return nil, herald.Invalid(herald.CodeInvalidQueryParameter, "filter", "Query parameter filter: %v", err)
		}
		out = append(out, m)
	}
	return out, nil
}

// silenceWindows is every window of p that has not ended and carries matchers: its silences.
func (s *Server) silenceWindows(c *call, p herald.Project) ([]herald.MaintenanceWindow, error) {
	var out []herald.MaintenanceWindow
	for off := 0; ; {
		page, total, err := s.store.Windows(c.ctx, p.ID, c.now, store.Page{Offset: off, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, w := range page {
			if len(w.Matchers) > 0 {
				out = append(out, w)
			}
		}
		if off += len(page); len(page) == 0 || off >= total {
			return out, nil
		}
	}
}

// amStatus is Alertmanager's GET /api/v2/status, as much as amtool reads: no cluster (Herald's
// replicas share Redis, not a gossip ring), no Alertmanager configuration.
type amStatus struct {
	Cluster     amCluster         `json:"cluster"`
	Config      map[string]string `json:"config"`
	Uptime      herald.Time       `json:"uptime"`
	VersionInfo map[string]string `json:"versionInfo"`
}

type amCluster struct {
	Status string `json:"status"`
	Peers  []any  `json:"peers"`
}

// GET /prometheus/groups/{groupId}/api/v2/status
func (s *Server) amStatus(c *call) (reply, error) {
	if _, err := c.project(herald.ReadProject); err != nil {
		return reply{}, err
	}
	return bare(amStatus{
		Cluster: amCluster{Status: "disabled", Peers: []any{}},
		Config:  map[string]string{"original": ""},
		Uptime:  herald.At(s.started),
		VersionInfo: map[string]string{"version": s.cfg.Version, "revision": s.cfg.GitHash, "branch": "",
			"buildUser": "", "buildDate": "", "goVersion": runtime.Version()},
	}), nil
}

// GET /prometheus/groups/{groupId}/-/healthy: 200 while the process serves.
func (s *Server) amHealthy(c *call) (reply, error) {
	if _, err := c.project(herald.ReadProject); err != nil {
		return reply{}, err
	}
	return bare("OK"), nil
}

// GET /prometheus/groups/{groupId}/-/ready: 200 when Herald can reach its store (reading the
// project did), else the 503 of the failed read.
func (s *Server) amReady(c *call) (reply, error) {
	if _, err := c.project(herald.ReadProject); err != nil {
		return reply{}, err
	}
	return bare("OK"), nil
}

// GET /prometheus/groups/{groupId}/api/v2/silences: the project's silences that have not
// ended (an ended window is gone, as in the rest of the API), filtered by their matchers.
func (s *Server) amListSilences(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	filter, err := filterMatchers(c.r.URL.Query())
	if err != nil {
		return reply{}, err
	}
	windows, err := s.silenceWindows(c, p)
	if err != nil {
		return reply{}, err
	}
	out := []herald.GettableSilence{}
	for _, w := range windows {
		if herald.SilenceSelected(w, filter) {
			out = append(out, herald.SilenceOf(w, c.now))
		}
	}
	return bare(out), nil
}

// silenceCreated is POST /api/v2/silences' answer.
type silenceCreated struct {
	SilenceID string `json:"silenceID"`
}

// POST /prometheus/groups/{groupId}/api/v2/silences: a new silence (a maintenance window with
// matchers, recorded with the same event as one made through the API), or, with an id, a
// change to one that has not ended.
func (s *Server) amPostSilence(c *call) (reply, error) {
	p, in, err := projectRequest[herald.PostableSilence](c, herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	if in.ID != "" {
		w, err := s.store.UpdateWindow(c.ctx, p.ID, in.ID, func(w *herald.MaintenanceWindow) ([]herald.Event, error) {
			if !w.Visible(c.now) || len(w.Matchers) == 0 {
				return nil, windowNotFound(in.ID)
			}
			if err := in.Apply(w, c.now); err != nil {
				return nil, err
			}
			w.Updated = herald.At(c.now)
			return []herald.Event{c.windowEvent(herald.EventWindowChanged, p, *w)}, nil
		})
		if err != nil {
			return reply{}, err
		}
		return bare(silenceCreated{w.ID}), nil
	}
	w := herald.MaintenanceWindow{ID: herald.NewID(c.now), GroupID: p.ID, Created: herald.At(c.now), Updated: herald.At(c.now)}
	if err := in.Apply(&w, c.now); err != nil {
		return reply{}, err
	}
	if err := s.store.CreateWindow(c.ctx, w, c.windowEvent(herald.EventWindowAdded, p, w)); err != nil {
		return reply{}, err
	}
	return bare(silenceCreated{w.ID}), nil
}

// GET /prometheus/groups/{groupId}/api/v2/silence/{silenceId}
func (s *Server) amGetSilence(c *call) (reply, error) {
	p, err := c.project(herald.ReadProject)
	if err != nil {
		return reply{}, err
	}
	w, err := c.silence(p)
	if err != nil {
		return reply{}, err
	}
	return bare(herald.SilenceOf(w, c.now)), nil
}

// DELETE /prometheus/groups/{groupId}/api/v2/silence/{silenceId}: expires the silence (its
// window ends now), recorded as a change of the window.
func (s *Server) amExpireSilence(c *call) (reply, error) {
	p, err := c.project(herald.WriteMonitoring)
	if err != nil {
		return reply{}, err
	}
	id := c.param("silenceId")
	_, err = s.store.UpdateWindow(c.ctx, p.ID, id, func(w *herald.MaintenanceWindow) ([]herald.Event, error) {
		if !w.Visible(c.now) || len(w.Matchers) == 0 {
			return nil, windowNotFound(id)
		}
		w.EndDate = herald.At(c.now)
		if w.StartDate.After(w.EndDate.Time) {
			w.StartDate = w.EndDate
		}
		w.Updated = herald.At(c.now)
		return []herald.Event{c.windowEvent(herald.EventWindowChanged, p, *w)}, nil
	})
	if err != nil {
		return reply{}, err
	}
	return bare(nil), nil
}

// silence reads the {silenceId} window of p: one with matchers that has not ended.
func (c *call) silence(p herald.Project) (herald.MaintenanceWindow, error) {
	id := c.param("silenceId")
	w, err := c.s.store.Window(c.ctx, p.ID, id)
	if err == nil && (!w.Visible(c.now) || len(w.Matchers) == 0) {
		err = windowNotFound(id)
	}
	return w, err
}
