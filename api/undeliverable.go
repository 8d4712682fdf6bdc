package api

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/netguard"
)

// A configuration whose notifications cannot be delivered as the installation is set up
// (Config.Delivery) is written all the same, with an ALERT_CONFIG_UNDELIVERABLE_AUDIT event in
// the same transaction and a warning in the log, each naming the setting to change
// (docs/decisions.md#warnings-where-a-notice-can-reach-nobody).

// resolveWait bounds the name lookup of a target URL's host: a slow resolver delays the write
// by no more than this, and an unresolved name is left to the workers.
const resolveWait = time.Second

// undeliverable is the warning event ev (an ALERT_CONFIG_UNDELIVERABLE_AUDIT about the
// configuration being written) when rule, enabled, has notifications the installation cannot
// deliver; none when all can, or when the API was not told the installation's setup.
func (c *call) undeliverable(rule herald.AlertRule, ev herald.Event) []herald.Event {
	if c.s.cfg.Delivery == nil || !rule.Enabled {
		return nil
	}
	us := c.s.cfg.Delivery.Undeliverable(rule, func(raw string) bool { return privateTarget(c.ctx, raw) })
	if len(us) == 0 {
		return nil
	}
	ev.Undeliverable = us
	return []herald.Event{ev}
}

// warnUndeliverable logs the warnings among events, once they are written: one line for all
// the configurations one call wrote (a new project writes its default ones).
func (s *Server) warnUndeliverable(evs []herald.Event) {
	var groupID string
	var configs, what, settings []string
	for _, ev := range evs {
		if ev.EventTypeName != herald.EventAlertConfigUndeliverable || len(ev.Undeliverable) == 0 {
			continue
		}
		groupID, configs = ev.GroupID, append(configs, ev.AlertConfigID)
		for _, u := range ev.Undeliverable {
			if w := u.String(); !slices.Contains(what, w) {
				what = append(what, w)
			}
			if !slices.Contains(settings, u.Setting) {
				settings = append(settings, u.Setting)
			}
		}
	}
	if len(configs) > 0 {
		s.log.Warn("alert configuration written with notifications that reach nobody as the installation is set up",
			zap.String("groupId", groupID), zap.Strings("alertConfigIds", configs),
			zap.Strings("undeliverable", what), zap.Strings("settings", settings))
	}
}

// privateTarget says whether URL raw's host is, or resolves to, an address a worker that
// refuses private targets does not connect to. A host that does not resolve in time is not
// called private: the workers decide, and record why.
func privateTarget(ctx context.Context, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return false
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return !netguard.Public(a)
	}
	return resolvedHosts.private(ctx, u.Hostname(), time.Now())
}

// resolvedHosts remembers recent answers: the check runs inside a store transaction, which
// retries when a concurrent write touched the same keys, and a retry must not wait on the
// resolver again. The answer only decides a warning, so a minute-old one is good enough.
var resolvedHosts = hostCache{ttl: time.Minute, max: 1024}

type hostCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	answers map[string]hostAnswer
}

type hostAnswer struct {
	private bool
	at      time.Time
}

func (h *hostCache) private(ctx context.Context, host string, now time.Time) bool {
	h.mu.Lock()
	a, ok := h.answers[host]
	h.mu.Unlock()
	if ok && now.Sub(a.at) < h.ttl {
		return a.private
	}
	ctx, cancel := context.WithTimeout(ctx, resolveWait)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return false // not remembered: the next write asks again
	}
	private := slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !netguard.Public(a) })
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.answers == nil || len(h.answers) >= h.max {
		h.answers = map[string]hostAnswer{}
	}
	h.answers[host] = hostAnswer{private: private, at: now}
	return private
}
