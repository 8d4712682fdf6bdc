package metrics

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/heraldhq/herald/store"
)

// scrapeTimeout bounds the Redis reads of one scrape (Prometheus's own default timeout is 10 s).
const scrapeTimeout = 5 * time.Second

var (
	openAlertsDesc = prometheus.NewDesc("herald_open_alerts",
		"Active alerts (status tracking or open), project and global, of the whole installation.",
		[]string{"scope", "status"}, nil)
	queueSizeDesc = prometheus.NewDesc("herald_queue_size",
		"Tasks in an asynq queue of the whole installation, by state.",
		[]string{"queue", "state"}, nil)
)

// DefaultMaxAge is how long the installation's gauges are served from one reading.
const DefaultMaxAge = 5 * time.Second

// Cluster is a collector of the installation's gauges, read from Redis: the active alerts and
// the tasks in Herald's queues. They are the same whichever process serves them: aggregate
// them with max(), not sum(). /metrics needs no credentials, so a reading serves every scrape
// for MaxAge, and scrapes that arrive while one is read wait for it (one reading in flight):
// however often anyone scrapes, Redis sees at most one reading per MaxAge per process.
type Cluster struct {
	// MaxAge is how long a reading is served (DefaultMaxAge); set it before the first scrape.
	MaxAge time.Duration

	store     *store.Store
	inspector *asynq.Inspector
	queues    []string
	log       *zap.Logger

	mu      sync.Mutex // held while reading: the single flight
	reading []prometheus.Metric
	readAt  time.Time
}

// NewCluster reads the alerts of st and the queues (Herald's queue names) on st's Redis;
// failures to read are logged to log and leave those gauges out of the scrape.
func NewCluster(st *store.Store, queues []string, log *zap.Logger) *Cluster {
	return &Cluster{MaxAge: DefaultMaxAge, store: st, inspector: asynq.NewInspectorFromRedisClient(st.Redis()),
		queues: slices.Sorted(slices.Values(queues)), log: log}
}

// Describe implements prometheus.Collector.
func (c *Cluster) Describe(ch chan<- *prometheus.Desc) {
	ch <- openAlertsDesc
	ch <- queueSizeDesc
}

// Collect implements prometheus.Collector: the last reading while it is younger than MaxAge,
// else a new one (which concurrent scrapes wait for and share).
func (c *Cluster) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if c.reading == nil || time.Since(c.readAt) >= c.MaxAge {
		var ms []prometheus.Metric
		add := func(m prometheus.Metric) { ms = append(ms, m) }
		c.collectAlerts(add)
		c.collectQueues(add)
		// Never nil once read, so that an empty or failed reading is served its MaxAge too.
		c.reading, c.readAt = append([]prometheus.Metric{}, ms...), time.Now()
	}
	reading := c.reading
	c.mu.Unlock()
	for _, m := range reading {
		ch <- m
	}
}

func (c *Cluster) collectAlerts(add func(prometheus.Metric)) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.store.CountActiveAlerts(ctx)
	if err != nil {
		c.log.Warn("metrics: counting active alerts", zap.Error(err))
		return
	}
	for scope, byStatus := range map[string]map[string]int64{"project": counts.Project, "global": counts.Global} {
		for status, n := range byStatus {
			add(prometheus.MustNewConstMetric(openAlertsDesc, prometheus.GaugeValue, float64(n), scope, strings.ToLower(status)))
		}
	}
}

// collectQueues reports every queue of c.queues, zero for one asynq has not seen yet (no task
// was ever queued on it), so that each series exists from the first scrape.
func (c *Cluster) collectQueues(add func(prometheus.Metric)) {
	known, err := c.inspector.Queues()
	if err != nil {
		c.log.Warn("metrics: listing queues", zap.Error(err))
		return
	}
	for _, q := range c.queues {
		info := &asynq.QueueInfo{}
		if slices.Contains(known, q) {
			if info, err = c.inspector.GetQueueInfo(q); err != nil {
				c.log.Warn("metrics: reading a queue", zap.String("queue", q), zap.Error(err))
				continue
			}
		}
		for _, s := range []struct {
			state string
			n     int
		}{{"pending", info.Pending}, {"active", info.Active}, {"scheduled", info.Scheduled}, {"retry", info.Retry}, {"archived", info.Archived}} {
			add(prometheus.MustNewConstMetric(queueSizeDesc, prometheus.GaugeValue, float64(s.n), q, s.state))
		}
	}
}
