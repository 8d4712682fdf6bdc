package api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// BasePath is where the API lives.
const BasePath = "/api/public/v1.0"

// Config is what the API needs besides the store.
type Config struct {
	// ExternalURL, when set, is the scheme and host links are built on (behind a proxy);
	// otherwise links use the request's own host.
	ExternalURL string
	// GitHash and Version are the build's, for X-Vendor-Service-Version.
	GitHash, Version string
	// NonceLifetime is how long a digest nonce is good for (default 5 minutes).
	NonceLifetime time.Duration
	// Clock tells the time (default the system clock).
	Clock herald.Clock
	// AuthLimits throttles failed authentications (default DefaultAuthLimits).
	AuthLimits store.AuthLimits
	// Delivery is what the installation's workers are set up to deliver: a configuration
	// written with notifications they cannot deliver gets a warning (api/undeliverable.go).
	// Nil: the API does not know, and warns of nothing.
	Delivery *herald.DeliverySetup

	// Monitoring, when set, is served under /monitoring/ (asynqmon) to callers with a global
	// role, authenticated like the API.
	Monitoring http.Handler
	// Metrics, when set, is served at /metrics without authentication (Prometheus scrapes it;
	// it holds no secrets).
	Metrics http.Handler
	// Ready says whether the API can serve (Redis reachable): /readyz answers 503 while it
	// errs. /healthz answers 200 while the process runs.
	Ready func(ctx context.Context) error
	// BasicOverHTTP lets the Prometheus front door take HTTP Basic credentials over plain
	// HTTP (HERALD_PROMETHEUS_BASIC_OVER_HTTP; herald dev sets it): otherwise Basic, which
	// sends the private key itself, is refused unless the connection is TLS.
	BasicOverHTTP bool
	// ActionKeys verify the tokens of notices' action links (served under ActPath); empty:
	// every link is refused.
	ActionKeys actlink.Keys
	// ChatBSigningSecret is HERALD_CHAT_B_SIGNING_SECRET, the chat app's signing secret that
	// CHAT_B button clicks are signed with; ChatBURL is HERALD_CHAT_B_URL, the service address
	// a click's response_url may name besides the service's own hooks host.
	ChatBSigningSecret, ChatBURL string
	// SMSToken is HERALD_SMS_TOKEN, the SMS gateway account's auth token its inbound webhook
	// is signed with.
	SMSToken string
	// HookClient posts what the service callbacks answer later (the update of a clicked chat
	// message): the senders' guarded client. Nil: no update is posted.
	HookClient *http.Client
	// Minute is HERALD_MINUTE, the length of a heartbeat's minutes (default a minute).
	Minute time.Duration
	// Observe, when set, is told of every request: its method, its route pattern (the path
	// when none matched), status and duration.
	Observe func(method, route string, status int, d time.Duration)
}

// MonitoringPath is where Config.Monitoring is served.
const MonitoringPath = "/monitoring/"

// Engine is what the API tells the alert engine (package dispatch implements it).
type Engine interface {
	// Observe queues a validated batch of a project's observations durably, in order.
	Observe(ctx context.Context, groupID string, batch []byte) error
	// ConfigChanged: a configuration was edited, disabled or deleted ("" groupID for a global one).
	ConfigChanged(ctx context.Context, groupID, configID string, global bool) error
	// Acknowledged: an alert's acknowledgement changed.
	Acknowledged(ctx context.Context, a herald.Alert, global bool) error
	// DeadLetters lists a project's deliveries that failed for good, the latest first.
	DeadLetters(ctx context.Context, groupID string) ([]dispatch.DeadLetter, error)
	// ReplayDeadLetter runs one of them again (NotFound when the project has none of that id).
	ReplayDeadLetter(ctx context.Context, groupID, id string) error
	// Queued: observations a heartbeat made were stored for the project; a session should
	// evaluate them now.
	Queued(ctx context.Context, groupID string)
}

// Server is the HTTP API.
type Server struct {
	store    *store.Store
	engine   Engine
	log      *zap.Logger
	cfg      Config
	verifier digest.Verifier
	kept     keptCredentials
	routed   map[string]*mounted // by mounted pattern
	mux      *http.ServeMux
	started  time.Time // for the front door's uptime

	fixedHeaders http.Header // of versionHeaders
}

// New builds the API on st, telling engine of what concerns it. It reads (or makes, once) the
// nonce-signing secret that every API process shares.
func New(ctx context.Context, st *store.Store, engine Engine, log *zap.Logger, cfg Config) (*Server, error) {
	if cfg.NonceLifetime <= 0 {
		cfg.NonceLifetime = 5 * time.Minute
	}
	if cfg.Clock == nil {
		cfg.Clock = herald.SystemClock{}
	}
	if cfg.AuthLimits == (store.AuthLimits{}) {
		cfg.AuthLimits = DefaultAuthLimits
	}
	cfg.ExternalURL = strings.TrimRight(cfg.ExternalURL, "/")
	if err := st.RequireRedis(ctx); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	secret, err := st.NonceSecret(ctx)
	if err != nil {
		return nil, fmt.Errorf("api: nonce secret: %w", err)
	}
	s := &Server{store: st, engine: engine, log: log, cfg: cfg, routed: map[string]*mounted{}, mux: http.NewServeMux(), started: cfg.Clock.Now(),
		fixedHeaders: fixedHeaders(cfg)}
	s.verifier = digest.Verifier{Secret: secret, Lifetime: cfg.NonceLifetime, Counter: st.NonceCounter(), Now: cfg.Clock.Now}
	for _, rt := range s.routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		pattern, h := method+" "+mountPath(path), s.endpoint(rt)
		s.mux.Handle(pattern, h)
		s.routed[pattern] = mount(pattern, h, checkedWithRead[rt.pattern])
	}
	s.mux.HandleFunc("/", s.unrouted)
	s.describeHooks()
	return s, nil
}

// route is one endpoint: "METHOD /path/{param}" under BasePath (or, for the Alertmanager
// front door, a path under PrometheusPath, served as it is), and its handler.
type route struct {
	pattern string
	handle  handler
}

// mountPath is where a route's path is served. A path ending in "/" (the document's form of
// creating a maintenance window) is that path only ({$}): the mux would serve it every path
// under it too, so that a POST to a window's own path would create another window.
func mountPath(path string) string {
	if strings.HasSuffix(path, "/") {
		path += "{$}"
	}
	if isPrometheusPath(path) {
		return path
	}
	return BasePath + path
}

// isPrometheusPath reports whether a path is the Alertmanager front door's.
func isPrometheusPath(p string) bool { return strings.HasPrefix(p, PrometheusPath+"/") }

// routes is every endpoint of the API.
func (s *Server) routes() []route {
	return []route{
		// API keys (docs/api.md#api-keys).
		{"PATCH /groups/{groupId}/apiKeys/{apiKeyId}", s.assignAPIKey},
		{"GET /admin/apiKeys", s.listGlobalAPIKeys},
		{"GET /admin/apiKeys/{apiKeyId}", s.getGlobalAPIKey},
		{"GET /orgs/{orgId}/apiKeys/{apiKeyId}", s.getOrgAPIKey},
		{"POST /admin/apiKeys", s.createGlobalAPIKey},
		{"POST /orgs/{orgId}/apiKeys", s.createOrgAPIKey},

		// Organizations and projects (docs/api.md#organizations-and-projects; each readable at its self link).
		{"GET /orgs", s.listOrgs},
		{"POST /orgs", s.createOrg},
		{"GET /orgs/{orgId}", s.getOrg},
		{"GET /groups", s.listProjects},
		{"POST /groups", s.createProject},
		{"GET /groups/{groupId}", s.getProject},

		// Project alert configurations (docs/api.md#alert-configurations).
		{"GET /groups/{groupId}/alertConfigs", s.listAlertConfigs},
		{"POST /groups/{groupId}/alertConfigs", s.createAlertConfig},
		{"GET /groups/{groupId}/alertConfigs/{alertConfigId}", s.getAlertConfig},
		{"PUT /groups/{groupId}/alertConfigs/{alertConfigId}", s.replaceAlertConfig},
		{"PATCH /groups/{groupId}/alertConfigs/{alertConfigId}", s.patchAlertConfig},
		{"DELETE /groups/{groupId}/alertConfigs/{alertConfigId}", s.deleteAlertConfig},
		{"GET /groups/{groupId}/alertConfigs/{alertConfigId}/alerts", s.listConfigAlerts},

		// Project alerts (docs/api.md#alerts).
		{"GET /groups/{groupId}/alerts", s.listAlerts},
		{"GET /groups/{groupId}/alerts/{alertId}", s.getAlert},
		{"PATCH /groups/{groupId}/alerts/{alertId}", s.acknowledgeAlert},

		// Delivery attempts (docs/api.md#delivery-attempts: readable by an operator).
		{"GET /groups/{groupId}/deliveries", s.listDeliveries},
		{"GET /groups/{groupId}/alerts/{alertId}/deliveries", s.listAlertDeliveries},
		{"GET /groups/{groupId}/deadLetters", s.listDeadLetters},
		{"POST /groups/{groupId}/deadLetters/{deliveryId}/replay", s.replayDeadLetter},

		// Global alerts (docs/api.md#global-alerts).
		{"GET /globalAlerts", s.listGlobalAlerts},
		{"GET /globalAlerts/{alertId}", s.getGlobalAlert},
		{"PATCH /globalAlerts/{alertId}", s.acknowledgeGlobalAlert},

		// Global alert configurations (docs/api.md#global-alert-configurations).
		{"GET /globalAlertConfigs", s.listGlobalAlertConfigs},
		{"POST /globalAlertConfigs", s.createGlobalAlertConfig},
		{"GET /globalAlertConfigs/{alertConfigId}", s.getGlobalAlertConfig},
		{"PATCH /globalAlertConfigs/{alertConfigId}", s.patchGlobalAlertConfig},
		{"DELETE /globalAlertConfigs/{alertConfigId}", s.deleteGlobalAlertConfig},
		{"GET /globalAlertConfigs/{alertConfigId}/alerts", s.listGlobalConfigAlerts},

		// Users (docs/api.md#users).
		{"POST /users", s.createUser},
		{"GET /users/{userId}", s.getUser},

		// Maintenance windows (docs/api.md#maintenance-windows).
		{"GET /groups/{groupId}/maintenanceWindows", s.listWindows},
		{"POST /groups/{groupId}/maintenanceWindows", s.createWindow},
		{"POST /groups/{groupId}/maintenanceWindows/", s.createWindow},
		{"GET /groups/{groupId}/maintenanceWindows/{windowId}", s.getWindow},
		{"PATCH /groups/{groupId}/maintenanceWindows/{windowId}", s.updateWindow},
		{"DELETE /groups/{groupId}/maintenanceWindows/{windowId}", s.deleteWindow},

		// Heartbeats (docs/api.md#heartbeats; pinged at PingPath, outside the API).
		{"GET /groups/{groupId}/heartbeats", s.listHeartbeats},
		{"POST /groups/{groupId}/heartbeats", s.createHeartbeat},
		{"GET /groups/{groupId}/heartbeats/{heartbeatId}", s.getHeartbeat},
		{"PATCH /groups/{groupId}/heartbeats/{heartbeatId}", s.updateHeartbeat},
		{"DELETE /groups/{groupId}/heartbeats/{heartbeatId}", s.deleteHeartbeat},
		{"POST /groups/{groupId}/heartbeats/{heartbeatId}/pause", s.pauseHeartbeat},
		{"POST /groups/{groupId}/heartbeats/{heartbeatId}/resume", s.resumeHeartbeat},
		{"POST /groups/{groupId}/heartbeats/{heartbeatId}/token", s.reissueHeartbeatToken},

		// Hosts and the observations that register them (docs/api.md#hosts-and-observations).
		{"GET /groups/{groupId}/hosts/{hostId}/disks/{partitionName}", s.getDisk},
		{"POST /groups/{groupId}/observations", s.postObservations},

		// Integrations (docs/api.md#integrations).
		{"GET /groups/{groupId}/integrations", s.listIntegrations},
		{"GET /groups/{groupId}/integrations/{integrationType}", s.getIntegration},
		{"PUT /groups/{groupId}/integrations/{integrationType}", s.putIntegration},
		{"POST /groups/{groupId}/integrations/{integrationType}", s.addIntegration},
		{"DELETE /groups/{groupId}/integrations/{integrationType}", s.deleteIntegration},

		// Events (docs/api.md#events; one event of a list, at its self link).
		{"GET /groups/{groupId}/events", s.listProjectEvents},
		{"GET /groups/{groupId}/events/{eventId}", s.getProjectEvent},
		{"GET /globalEvents", s.listGlobalEvents},
		{"GET /globalEvents/{eventId}", s.getGlobalEvent},
		{"GET /orgs/{orgId}/events/{eventId}", s.getOrgEvent},

		// The Alertmanager front door for Prometheus and amtool (docs/api.md#prometheus-and-amtool).
		{"POST /prometheus/groups/{groupId}/api/v2/alerts", s.amPostAlerts},
		{"GET /prometheus/groups/{groupId}/api/v2/alerts", s.amListAlerts},
		{"GET /prometheus/groups/{groupId}/api/v2/status", s.amStatus},
		{"GET /prometheus/groups/{groupId}/-/healthy", s.amHealthy},
		{"GET /prometheus/groups/{groupId}/-/ready", s.amReady},
		{"GET /prometheus/groups/{groupId}/api/v2/silences", s.amListSilences},
		{"POST /prometheus/groups/{groupId}/api/v2/silences", s.amPostSilence},
		{"GET /prometheus/groups/{groupId}/api/v2/silence/{silenceId}", s.amGetSilence},
		{"DELETE /prometheus/groups/{groupId}/api/v2/silence/{silenceId}", s.amExpireSilence},
	}
}

// ServeHTTP authenticates every request under BasePath, then routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	defer func() {
		level := zapcore.InfoLevel
		if rec.roundTrip { // the challenge half of a digest call: the call itself is logged next
			level = zapcore.DebugLevel
		}
		ce := s.log.Check(level, "request")
		if ce == nil {
			return
		}
		f := requestLogFields.Get().(*requestLogLine)
		*f = requestLogLine{zap.String("method", r.Method), zap.String("path", loggedPath(r)),
			zap.Int("status", rec.status), zap.Duration("duration", time.Since(start)),
			zap.String("remote", remoteAddress(r)), zap.String("publicKey", rec.who.PublicKey), zap.String("username", rec.who.Username)}
		ce.Write(f[:]...)
		*f = requestLogLine{}
		requestLogFields.Put(f)
	}()
	route := r.URL.Path
	if s.cfg.Observe != nil {
		defer func() { s.cfg.Observe(r.Method, route, rec.status, time.Since(start)) }()
	}
	defer s.recoverPanic(rec, r)
	s.versionHeaders(rec.Header())
	connectionHeader(rec.Header(), r)
	switch p := r.URL.Path; {
	case p == "/healthz":
		s.writeJSON(rec, r, http.StatusOK, map[string]string{"status": "ok"}, "application/json")
		return
	case p == "/readyz":
		s.ready(rec, r)
		return
	case p == "/metrics" && s.cfg.Metrics != nil:
		s.cfg.Metrics.ServeHTTP(rec, r)
		return
	case p == MonitoringPath[:len(MonitoringPath)-1] && s.cfg.Monitoring != nil: // p+"/" == MonitoringPath, without making p+"/"
		http.Redirect(rec, r, MonitoringPath, http.StatusMovedPermanently)
		return
	case strings.HasPrefix(p, MonitoringPath) && s.cfg.Monitoring != nil:
		route = MonitoringPath
		monitoringHeaders(rec.Header())
		if s.browserGuard(rec, r, false) {
			return
		}
		var ok bool
		if rec.who, ok = s.authenticate(rec, r, true); !ok {
			return
		}
		// Any global role looks; changing queues (when the console is writable at all) takes a
		// global owner or monitoring administrator.
		need := herald.ReadGlobal
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			need = herald.MonitorGlobal
		}
		if !rec.who.Can(need, herald.Scope{}) {
			s.writeError(rec, r, herald.Unauthorized())
			return
		}
		s.cfg.Monitoring.ServeHTTP(rec, r)
		return
	case strings.HasPrefix(p, ActPath):
		route = actRoute // never the token
		s.serveAct(rec, r)
		return
	case strings.HasPrefix(p, PingPath):
		route = pingRoute // never the token
		s.servePing(rec, r)
		return
	case strings.HasPrefix(p, HooksPath):
		route = HooksPath // a hook's own path below, not any path a caller makes up
		for _, h := range s.hooks() {
			if _, path, _ := strings.Cut(h.pattern, " "); path == p {
				route = p
			}
		}
		s.serveHook(rec, r)
		return
	case publicDocs[p].body != nil:
		route = p
		s.serveDoc(rec, r, publicDocs[p])
		return
	case !strings.HasPrefix(p, BasePath+"/") && !isPrometheusPath(p):
		s.writeError(rec, r, herald.Errorf(herald.KindNotFound, herald.CodeResourceNotFound, []any{r.URL.Path}, "There is no resource at %s.", r.URL.Path))
		return
	}
	h, pattern := s.mux.Handler(r) // matched once (route.go)
	if pattern != "" && pattern != "/" {
		route = pattern // before authenticating, so that refused requests count by route too
	}
	m := s.routed[pattern]
	if m != nil && h != http.Handler(m.h) {
		m = nil // a redirect to the cleaned path or a trailing slash: the mux answers it
	}
	if s.browserGuard(rec, r, true) {
		return
	}
	var ok bool
	switch {
	case isPrometheusPath(r.URL.Path) && isBasic(r):
		rec.who, ok = s.authenticateBasic(rec, r)
	case m != nil && m.withRead:
		rec.who, rec.pending, ok = s.authenticateLater(rec, r)
	default:
		rec.who, ok = s.authenticate(rec, r, false)
	}
	if !ok {
		return
	}
	// To an endpoint, with rec telling it whom authentication found (and the path's values
	// when ServeHTTP calls it itself).
	if m != nil {
		if rec.params, ok = m.values(r.URL.EscapedPath()); ok {
			m.h.ServeHTTP(rec, r)
			return
		}
		rec.params = pathValues{}
	}
	s.mux.ServeHTTP(rec, r)
}

// requestLogLine is the fields of a request's log line. Every request logs one, and the fields
// given to a logger escape to the heap: they are kept for reuse (requestLogFields), which zap
// allows, since its cores encode or copy them as they write.
type requestLogLine [7]zap.Field

var requestLogFields = sync.Pool{New: func() any { return new(requestLogLine) }}

// ready answers /readyz: 200 when the API can serve, 503 (with the error body) when not.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(r.Context()); err != nil {
			s.log.Warn("not ready", zap.Error(err))
			s.writeProblem(w, r, http.StatusServiceUnavailable, &herald.Error{Code: "NOT_READY", Detail: "Herald cannot reach its store."})
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ready"}, "application/json")
}

// unrouted answers a path no endpoint serves: 405 when another method would be served, 404
// otherwise, both with the error body.
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			s.methodNotAllowed(w, r)
			return
		}
	}
	s.writeError(w, r, herald.Errorf(herald.KindNotFound, herald.CodeResourceNotFound, []any{r.URL.Path}, "There is no resource at %s.", r.URL.Path))
}

// methodNotAllowed answers 405 with the error body: the path exists, not with this method.
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	s.writeProblem(w, r, http.StatusMethodNotAllowed, &herald.Error{Code: herald.CodeMethodNotAllowed,
		Detail: fmt.Sprintf("Method %s is not allowed on %s.", r.Method, r.URL.Path), Parameters: []any{r.Method}})
}

// statusRecorder is the response of a request ServeHTTP serves, with what it learned of the
// request on the way that its endpoint and its log line need. It holds the request's state
// rather than its context, so that no request is copied to carry it.
type statusRecorder struct {
	http.ResponseWriter
	status    int
	roundTrip bool // answered with a digest challenge to a request without (current) credentials

	who     herald.Principal // whom authentication found
	pending *keptCheck       // its check left for the endpoint's read (readcheck.go), if any
	params  pathValues       // the path's values, when ServeHTTP calls the endpoint itself (names set)

	// Room for the request's pending check and its endpoint's call, so that a polled request
	// allocates one record rather than three.
	check keptCheck
	call  call
}

// authenticated is whom the request to an endpoint (w its ServeHTTP's) was authenticated as,
// its pending check, and its path's values when ServeHTTP found them (nil: the mux did).
func authenticated(w http.ResponseWriter) (herald.Principal, *keptCheck, *pathValues) {
	if rec, ok := w.(*statusRecorder); ok {
		if rec.params.names != nil {
			return rec.who, rec.pending, &rec.params
		}
		return rec.who, rec.pending, nil
	}
	return herald.Principal{}, nil, nil // served by anything but ServeHTTP: nobody
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}
