package metrics

import (
	"context"
	"slices"
	"strings"
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

// Cluster is a collector of the installation's gauges, read from Redis at each scrape: the
// active alerts and the tasks in Herald's queues. They are the same whichever process serves
// them: aggregate them with max(), not sum().
type Cluster struct {
	store     *store.Store
	inspector *asynq.Inspector
	queues    []string
	log       *zap.Logger
}

// NewCluster reads the alerts of st and the queues (Herald's queue names) on st's Redis;
// failures to read are logged to log and leave those gauges out of the scrape.
func NewCluster(st *store.Store, queues []string, log *zap.Logger) *Cluster {
	return &Cluster{store: st, inspector: asynq.NewInspectorFromRedisClient(st.Redis()),
		queues: slices.Sorted(slices.Values(queues)), log: log}
}

// Describe implements prometheus.Collector.
func (c *Cluster) Describe(ch chan<- *prometheus.Desc) {
	ch <- openAlertsDesc
	ch <- queueSizeDesc
}

// Collect implements prometheus.Collector.
func (c *Cluster) Collect(ch chan<- prometheus.Metric) {
	c.collectAlerts(ch)
	c.collectQueues(ch)
}

func (c *Cluster) collectAlerts(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.store.CountActiveAlerts(ctx)
	if err != nil {
		c.log.Warn("metrics: counting active alerts", zap.Error(err))
		return
	}
	for scope, byStatus := range map[string]map[string]int64{"project": counts.Project, "global": counts.Global} {
		for status, n := range byStatus {
			ch <- prometheus.MustNewConstMetric(openAlertsDesc, prometheus.GaugeValue, float64(n), scope, strings.ToLower(status))
		}
	}
}

// collectQueues reports every queue of c.queues, zero for one asynq has not seen yet (no task
// was ever queued on it), so that each series exists from the first scrape.
func (c *Cluster) collectQueues(ch chan<- prometheus.Metric) {
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
			ch <- prometheus.MustNewConstMetric(queueSizeDesc, prometheus.GaugeValue, float64(s.n), q, s.state)
		}
	}
}
