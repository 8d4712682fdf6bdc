package channels

import (
	"testing"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels/channelstest"
)

func TestSummary(t *testing.T) {
	host := herald.Alert{
		ID:              "65a1b2c3d4e5f60718293a4c",
		GroupID:         "5f0c1d2e3f4a5b6c7d8e9f00",
		EventTypeName:   "HOST_DOWN",
		Status:          herald.StatusOpen,
		Created:         channelstest.At("2026-11-21T18:40:55Z"),
		HostID:          "b1946ac92492d2347c6235b4d2611184",
		HostnameAndPort: "db2.example.com:27017",
		ReplicaSetName:  "rs0",
	}
	closed := channelstest.MetricAlert()
	closed.Status = herald.StatusClosed
	closed.Resolved = channelstest.At("2026-11-21T19:02:10Z")
	acked := host
	acked.AcknowledgedUntil = channelstest.At("2026-11-22T06:00:00Z")
	acked.AcknowledgingUsername = "alice@example.com"
	acked.AcknowledgementComment = "Rebooting,\nback soon"
	cluster := herald.Alert{
		ID:            "65a1b2c3d4e5f60718293a4d",
		GroupID:       "5f0c1d2e3f4a5b6c7d8e9f00",
		EventTypeName: "SHARDED_CLUSTER",
		Status:        herald.StatusOpen,
		Created:       channelstest.At("2026-11-21T18:40:55Z"),
		ClusterID:     "c1",
		ClusterName:   "orders",
		ShardName:     "shard-2",
	}

	cases := []struct {
		name  string
		alert herald.Alert
		want  string
	}{
		{"host alert", host, `Alert OPEN: HOST_DOWN
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Host: db2.example.com:27017
Replica set: rs0
Created: 2026-11-21T18:40:55Z
Alert ID: 65a1b2c3d4e5f60718293a4c`},
		{"metric alert", channelstest.MetricAlert(), `Alert OPEN: OUTSIDE_METRIC_THRESHOLD
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Host: db1.example.com:27017
Replica set: rs0
Metric: CONNECTIONS, current value 512 RAW
Created: 2026-11-21T18:40:55Z
Alert ID: 65a1b2c3d4e5f60718293a4b`},
		{"closed alert", closed, `Alert CLOSED: OUTSIDE_METRIC_THRESHOLD
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Host: db1.example.com:27017
Replica set: rs0
Metric: CONNECTIONS, current value 512 RAW
Created: 2026-11-21T18:40:55Z
Resolved: 2026-11-21T19:02:10Z
Alert ID: 65a1b2c3d4e5f60718293a4b`},
		{"acknowledged alert", acked, `Alert OPEN: HOST_DOWN
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Host: db2.example.com:27017
Replica set: rs0
Created: 2026-11-21T18:40:55Z
Acknowledged: until 2026-11-22T06:00:00Z by alice@example.com: Rebooting, back soon
Alert ID: 65a1b2c3d4e5f60718293a4c`},
		{"cluster alert", cluster, `Alert OPEN: SHARDED_CLUSTER
Project: 5f0c1d2e3f4a5b6c7d8e9f00
Cluster: orders
Shard: shard-2
Created: 2026-11-21T18:40:55Z
Alert ID: 65a1b2c3d4e5f60718293a4d`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Summary(c.alert); got != c.want {
				t.Errorf("Summary:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}
