package store

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Retention: what is older than a cutoff leaves Redis, document and every index entry
// together, a page at a time (one MULTI per page, on the scope's slot), at most a given number
// per call so that one run never holds Redis for long.

// purgePage is how many documents one MULTI deletes at most.
const purgePage = 200

// OrgIDs lists the ids of all organizations, oldest first, a page at a time.
func (s *Store) OrgIDs(ctx context.Context, p Page) ([]string, error) {
	return s.rdb.ZRange(ctx, orgs().index(), int64(p.Offset), int64(p.Offset+p.Limit-1)).Result()
}

// PurgeAlerts deletes up to limit ended (CLOSED or CANCELLED) alerts of project groupID, or
// with global the global alerts of every project, that ended before cutoff: their resolved
// time, or updated for an alert without one (a cancelled alert). The document goes with its
// entries in every index (all alerts, status, configuration) and any engine state left of it
// (schedule, due entry, reach, its record of digests). more reports that it stopped at
// limit: there may be more.
func (s *Store) PurgeAlerts(ctx context.Context, global bool, groupID string, cutoff time.Time, limit int) (deleted int, more bool, err error) {
	cs := alertCollection(global, groupID)
	for _, status := range []string{herald.StatusClosed, herald.StatusCancelled} {
		if deleted >= limit {
			return deleted, true, nil
		}
		index := cs.index("status", status)
		// Alerts are indexed by creation, which is never after the end: the index bounds the
		// candidates, the document decides.
		n, m, err := purge(ctx, s, cs, index, cutoff, limit-deleted,
			func(a herald.Alert) bool { return !herald.Active(a.Status) && alertEnded(a).Before(cutoff) },
			func(pipe redis.Pipeliner, id string, a *herald.Alert) {
				members := cs.indexMembers(id)
				pipe.ZRem(ctx, index, members...)
				pipe.ZRem(ctx, cs.index(), id)
				if a == nil {
					return
				}
				pipe.Del(ctx, cs.doc(id))
				pipe.ZRem(ctx, cs.index("status", a.Status), members...)
				pipe.ZRem(ctx, cs.index("config", a.AlertConfigID), members...)
				sc := Scope{GroupID: groupID}
				if global {
					sc = Scope{GroupID: a.GroupID, Global: true}
				}
				pipe.HDel(ctx, sc.schedules(), docField(id), id)
				pipe.HDel(ctx, sc.expiring(), id)
				pipe.Del(ctx, sc.reach(id))
				pipe.HDel(ctx, sc.told(), packID(id))
				pipe.ZRem(ctx, sc.due(), sc.dueMembers(id)...)
			})
		deleted += n
		if err != nil {
			return deleted, false, err
		}
		more = more || m
	}
	return deleted, more, nil
}

// alertEnded is when an ended alert ended.
func alertEnded(a herald.Alert) time.Time {
	if !a.Resolved.IsZero() {
		return a.Resolved.Time
	}
	return a.Updated.Time
}

// PurgeEvents deletes up to limit events of a scope created before cutoff, each with its
// index entries: its type's, and for an event written before, the index of all events too.
func (s *Store) PurgeEvents(ctx context.Context, sc EventScope, cutoff time.Time, limit int) (deleted int, more bool, err error) {
	c := events(sc.GroupID, sc.OrgID)
	indexes, err := s.eventIndexes(ctx, c)
	if err != nil {
		return 0, false, err
	}
	for _, index := range indexes {
		if deleted >= limit {
			return deleted, true, nil
		}
		n, m, err := purge(ctx, s, c, index, cutoff, limit-deleted,
			func(e herald.Event) bool { return e.Created.Before(cutoff) },
			func(pipe redis.Pipeliner, id string, e *herald.Event) {
				pipe.ZRem(ctx, index, c.indexMembers(id)...)
				if e == nil {
					return
				}
				c.delDoc(ctx, pipe, id)
				if index == c.index() {
					pipe.ZRem(ctx, c.index("type", e.EventTypeName), c.indexMembers(id)...)
				}
			})
		deleted += n
		if err != nil {
			return deleted, false, err
		}
		more = more || m
	}
	return deleted, more, nil
}

// PurgeWindows deletes up to limit maintenance windows of project groupID that ended before
// cutoff.
func (s *Store) PurgeWindows(ctx context.Context, groupID string, cutoff time.Time, limit int) (deleted int, more bool, err error) {
	ws := windows(groupID)
	return purge(ctx, s, ws, ws.index(), cutoff, limit,
		func(w herald.MaintenanceWindow) bool { return w.EndDate.Before(cutoff) },
		func(pipe redis.Pipeliner, id string, w *herald.MaintenanceWindow) {
			pipe.ZRem(ctx, ws.index(), id)
			pipe.Del(ctx, ws.doc(id))
		})
}

// purge deletes documents of c listed in index with a score (unix seconds) at or before
// cutoff's second, oldest first, that expired says are old, at most limit of them. drop queues
// the deletion of one (v nil: its document is gone already and only index entries are left).
// Each page is one MULTI on the index's slot. The documents it keeps (and any it cannot
// decode) stay listed, so each page starts after them. more reports that it stopped at limit.
func purge[T any](ctx context.Context, s *Store, c collection, index string, cutoff time.Time, limit int,
	expired func(v T) bool, drop func(pipe redis.Pipeliner, id string, v *T)) (deleted int, more bool, err error) {
	hi := strconv.FormatInt(cutoff.Unix(), 10)
	kept := 0
	for deleted < limit {
		count := min(purgePage, limit-deleted)
		ids, err := s.rdb.ZRangeByScore(ctx, index, &redis.ZRangeBy{Min: "-inf", Max: hi, Offset: int64(kept), Count: int64(count)}).Result()
		if err != nil || len(ids) == 0 {
			return deleted, false, err
		}
		ids = c.idsOfMembers(ids)
		vals, err := s.docs(ctx, c, ids)
		if err != nil {
			return deleted, false, err
		}
		n, k := 0, 0
		_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			for i, id := range ids {
				str, ok := vals[i].(string)
				if !ok {
					drop(pipe, id, nil)
					continue
				}
				var v T
				if err := decodeDocOf(c, id, []byte(str), &v); err != nil || !expired(v) {
					k++
					continue
				}
				drop(pipe, id, &v)
				n++
			}
			return nil
		})
		if err != nil {
			return deleted, false, err
		}
		deleted, kept = deleted+n, kept+k
		if len(ids) < count {
			return deleted, false, nil
		}
	}
	return deleted, true, nil
}
