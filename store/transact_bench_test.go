package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// BenchmarkTransactOpen: a storm's commits, as the engine makes them from observation
// batches: 10,000 new alerts of one configuration (HOST_DOWN, one webhook notification,
// opened at once), in steps of 500, each step looking for the targets' open alerts
// (OpenAlertIDs) and committing the alerts with their opening events and notices (Transact).
// The Redis it runs on keeps what the iterations before opened, as a storm's Redis does.
// Reported per alert: this process's CPU (user + system, the alerts' making included),
// redis-server's (INFO cpu), and the Redis time of the commit (EXEC, its commands inside)
// and of the lookups (HMGET) from INFO commandstats.
//
//	go test ./store/ -run '^$' -bench TransactOpen -benchtime 5x -count 6
func BenchmarkTransactOpen(b *testing.B) {
	const alerts, group = 10000, 500
	ctx := context.Background()
	rdb, st, sc, l := leasedProject(b)
	var cpu, redisCPU time.Duration
	var execUsec, hmgetUsec float64
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		cs := stormChanges(b, sc, n, alerts)
		cpu0, redis0 := processCPU(b), storetest.RedisCPU(b, rdb)
		stats0 := commandUsec(b, rdb)
		b.StartTimer()
		for off := 0; off < alerts; off += group {
			step := cs[off : off+group]
			pairs := make([][2]string, len(step))
			for i, c := range step {
				pairs[i] = [2]string{c.Tracked.Alert.AlertConfigID, c.Tracked.Target}
			}
			if _, err := st.OpenAlertIDs(ctx, sc, pairs); err != nil {
				b.Fatal(err)
			}
			if _, err := l.Transact(ctx, sc, nil, func([]store.Tracked) ([]store.Change, error) { return step, nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu += processCPU(b) - cpu0
		redisCPU += storetest.RedisCPU(b, rdb) - redis0
		stats := commandUsec(b, rdb)
		execUsec += stats["exec"] - stats0["exec"]
		hmgetUsec += stats["hmget"] - stats0["hmget"]
		b.StartTimer()
	}
	b.StopTimer()
	per := float64(b.N * alerts)
	b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/alert")
	b.ReportMetric(float64(redisCPU.Nanoseconds())/per, "redis-ns/alert")
	b.ReportMetric(execUsec*1000/per, "exec-ns/alert")
	b.ReportMetric(hmgetUsec*1000/per, "hmget-ns/alert")
	b.ReportMetric(0, "ns/op")
}

// stormChanges are the changes of n new alerts of scope sc opened at once, with their opening
// events and first notices, as the engine decides them: one configuration's (HOST_DOWN, one
// webhook notification, no delay), for hosts of iteration it.
func stormChanges(tb testing.TB, sc store.Scope, it, n int) []store.Change {
	now := time.Now()
	config := herald.NewID(now)
	rule := herald.AlertRule{Enabled: true, EventTypeName: "HOST_DOWN",
		Notifications: []herald.Notification{{TypeName: "WEBHOOK", IntervalMin: 60}}}
	cs := make([]store.Change, n)
	for i := range cs {
		active := true
		host := fmt.Sprintf("storm-%d-%d", it, i)
		o := herald.Observation{EventTypeName: "HOST_DOWN", Active: &active, HostID: host, HostnameAndPort: host + ".example.com:27017"}
		a, sched := herald.NewAlert(herald.NewID(now), sc.GroupID, config, rule, o, time.Minute, now)
		st := herald.Advance(a, sched, rule, false, time.Minute, now)
		if !st.Opened {
			tb.Fatalf("the storm's alert did not open: %+v", st)
		}
		a = st.Alert
		ev := herald.Event{ID: herald.NewID(now), Created: herald.At(now), EventTypeName: herald.AlertEventType(a), GroupID: a.GroupID,
			AlertID: a.ID, AlertConfigID: a.AlertConfigID, HostID: a.HostID, Raw: map[string]any{"status": a.Status}}
		notice := fmt.Appendf(nil, `{"groupId":%q,"alertId":%q,"configId":%q,"notification":0,"event":"open","deliveryId":"%s-0-1"}`,
			a.GroupID, a.ID, config, a.ID)
		cs[i] = store.Change{Tracked: store.Tracked{Alert: a, Schedule: st.Schedule, Target: store.TargetID(o.TargetKey()), Scope: sc},
			Wake: st.Wake, Events: []herald.Event{ev}, Notices: [][]byte{notice}, OutboxUntil: now.Add(time.Minute)}
	}
	return cs
}

// commandUsec is Redis's time so far in each command (INFO commandstats, µs), by name.
func commandUsec(tb testing.TB, rdb *redis.Client) map[string]float64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || name == line {
			continue
		}
		if _, v, ok := strings.Cut(rest, "usec="); ok {
			out[name], _ = strconv.ParseFloat(strings.SplitN(v, ",", 2)[0], 64)
		}
	}
	return out
}
