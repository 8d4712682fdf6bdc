package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// ActiveAlertCounts are how many alerts are TRACKING and OPEN, by status: of all projects
// together, and global.
type ActiveAlertCounts struct {
	Project, Global map[string]int64
}

// countPage is how many projects one round trip of CountActiveAlerts reads.
const countPage = 500

// CountActiveAlerts counts the active alerts of every project and the global ones from the
// status indexes' sizes (ZCARD, O(1) each), for a metrics scrape. Its cost is bounded by
// the number of projects, not of alerts: one pipelined round trip per countPage projects.
// Counting at each scrape, rather than keeping a running total, asks nothing of the paths that
// write alerts (retention, cancellation, ...) and cannot drift.
func (s *Store) CountActiveAlerts(ctx context.Context) (ActiveAlertCounts, error) {
	statuses := []string{herald.StatusTracking, herald.StatusOpen}
	out := ActiveAlertCounts{Project: map[string]int64{}, Global: map[string]int64{}}
	for _, st := range statuses {
		out.Project[st] = 0
	}
	global := globalAlerts()
	var globalCounts []*redis.IntCmd
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, st := range statuses {
			globalCounts = append(globalCounts, pipe.ZCard(ctx, global.index("status", st)))
		}
		return nil
	}); err != nil {
		return out, err
	}
	for i, st := range statuses {
		out.Global[st] = globalCounts[i].Val()
	}
	for off := 0; ; off += countPage {
		ids, err := s.ProjectIDs(ctx, Page{Offset: off, Limit: countPage})
		if err != nil || len(ids) == 0 {
			return out, err
		}
		counts := make([]*redis.IntCmd, 0, len(ids)*len(statuses))
		if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, id := range ids {
				for _, st := range statuses {
					counts = append(counts, pipe.ZCard(ctx, alerts(id).index("status", st)))
				}
			}
			return nil
		}); err != nil {
			return out, err
		}
		for i, c := range counts {
			out.Project[statuses[i%len(statuses)]] += c.Val()
		}
		if len(ids) < countPage {
			return out, nil
		}
	}
}
