package store

import (
	"context"
	"errors"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errAlertNotFound(id string) error { return herald.NotFound(herald.CodeAlertNotFound, "alert", id) }

// alertCollection is where an alert lives: its project's slot, or the global one.
func alertCollection(global bool, groupID string) collection {
	if global {
		return globalAlerts()
	}
	return alerts(groupID)
}

// Alert indexes, all scored by creation time:
//
//	alerts:status:<STATUS>  alerts in that status
//	alerts:config:<id>      the active (TRACKING or OPEN) alerts of a configuration
//
// Every alert is in exactly one status index, so the list of all alerts is those four merged
// (listMerged): an index of its own would cost each alert another entry, some 130 bytes.
// Alerts written before were in such an index too ("alerts"); it is no longer read or added
// to, and retention still removes what it purges from it. Members are the ids' 12 bytes
// (indexMember); those written before, whole ids, stay until their alert leaves the index.
func indexAlert(ctx context.Context, pipe redis.Pipeliner, cs collection, a herald.Alert, prevStatus string) {
	moveAlertIndexes(cs, a, prevStatus, cs.indexMember(a.ID), func(kind, name string) string { return cs.index(kind, name) },
		func(key string, z redis.Z) { pipe.ZAdd(ctx, key, z) },
		func(key string, members ...any) { pipe.ZRem(ctx, key, members...) })
}

// moveAlertIndexes gives zAdd and zRem the index changes of alert a, whose status was
// prevStatus ("" for a new alert), whose member in an index of cs is member
// (cs.indexMember), and whose indexes index names (cs.index, or the same names kept by a
// transaction that writes hundreds of alerts to the same few). An alert whose status did not
// change keeps its entries as they are (in whichever form they were written): its score, the
// creation time, never changes, and the entries were written with the status, in the same
// transaction.
func moveAlertIndexes(cs collection, a herald.Alert, prevStatus, member string, index func(kind, name string) string,
	zAdd func(key string, z redis.Z), zRem func(key string, members ...any)) {
	if prevStatus == a.Status {
		return
	}
	z := redis.Z{Score: score(a.Created), Member: member}
	if prevStatus != "" {
		zRem(index("status", prevStatus), cs.indexMembers(a.ID)...)
	}
	zAdd(index("status", a.Status), z)
	switch was := prevStatus != "" && herald.Active(prevStatus); {
	case herald.Active(a.Status) && !was:
		zAdd(index("config", a.AlertConfigID), z)
	case !herald.Active(a.Status) && was:
		zRem(index("config", a.AlertConfigID), cs.indexMembers(a.ID)...)
	}
}

// SaveAlert writes an alert (global or of its project) with its indexes and the events it
// makes; prevStatus is the status it had before ("" for a new alert).
func (s *Store) SaveAlert(ctx context.Context, a herald.Alert, global bool, prevStatus string, evs ...herald.Event) error {
	cs := alertCollection(global, a.GroupID)
	evc := events(a.GroupID, "")
	if global {
		evc = events("", "")
	}
	_, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, cs.doc(a.ID), a); err != nil {
			return err
		}
		keepNotified(ctx, pipe, cs, &a)
		indexAlert(ctx, pipe, cs, a, prevStatus)
		return recordEvents(ctx, pipe, evc, evs)
	})
	return err
}

// Alert reads a project alert.
func (s *Store) Alert(ctx context.Context, groupID, id string) (herald.Alert, error) {
	return s.alert(ctx, alerts(groupID), id)
}

// GlobalAlert reads a global alert.
func (s *Store) GlobalAlert(ctx context.Context, id string) (herald.Alert, error) {
	return s.alert(ctx, globalAlerts(), id)
}

// alert reads alert id of cs with its lastNotified: a project's in one round trip, a global
// one's in two (its reach hash is under its project, which its document names).
func (s *Store) alert(ctx context.Context, cs collection, id string) (herald.Alert, error) {
	var a herald.Alert
	if !herald.ValidID(id) {
		return a, errAlertNotFound(id)
	}
	var doc, notified *redis.StringCmd
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		doc = pipe.Get(ctx, cs.doc(id))
		if g := cs.groupID(); g != "" {
			notified = readNotified(ctx, pipe, Scope{GroupID: g}, id)
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return a, err
	}
	if err := decodeAnswer(doc, &a, func() error { return errAlertNotFound(id) }); err != nil {
		return a, err
	}
	if notified == nil {
		notified = readNotified(ctx, s.rdb, alertScope(cs, &a), id)
	}
	return a, setNotified(&a, notified)
}

// AlertsByID reads the alerts of project groupID named by ids that exist, in the order of ids
// (a missing one is left out), in one round trip: they share the project's slot. The caller
// bounds ids.
func (s *Store) AlertsByID(ctx context.Context, groupID string, ids []string) ([]herald.Alert, error) {
	return getMany[herald.Alert](ctx, s, alerts(groupID), validIDs(ids))
}

// GlobalAlertsByID reads the global alerts named by ids that exist, in the order of ids, in
// two round trips (the documents, then their lastNotified). The caller bounds ids.
func (s *Store) GlobalAlertsByID(ctx context.Context, ids []string) ([]herald.Alert, error) {
	return getMany[herald.Alert](ctx, s, globalAlerts(), validIDs(ids))
}

// validIDs is ids without those not of herald's form (never read).
func validIDs(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return !herald.ValidID(id) })
}

// AlertFilter selects alerts: by status ("" for all) and creation time.
type AlertFilter struct {
	Status  string
	Created TimeRange
}

// indexes are the status indexes of cs that f lists: its status's, or all four.
func (f AlertFilter) indexes(cs collection) []string {
	if f.Status != "" {
		return []string{cs.index("status", f.Status)}
	}
	return []string{cs.index("status", herald.StatusTracking), cs.index("status", herald.StatusOpen),
		cs.index("status", herald.StatusClosed), cs.index("status", herald.StatusCancelled)}
}

// Alerts lists a project's alerts, newest first.
func (s *Store) Alerts(ctx context.Context, groupID string, f AlertFilter, p Page) ([]herald.Alert, int, error) {
	cs := alerts(groupID)
	return listMerged[herald.Alert](ctx, s, cs, f.indexes(cs), f.Created, p)
}

// GlobalAlerts lists global alerts, newest first.
func (s *Store) GlobalAlerts(ctx context.Context, f AlertFilter, p Page) ([]herald.Alert, int, error) {
	cs := globalAlerts()
	return listMerged[herald.Alert](ctx, s, cs, f.indexes(cs), f.Created, p)
}

// ConfigAlerts lists the active alerts a project configuration opened, newest first.
func (s *Store) ConfigAlerts(ctx context.Context, groupID, configID string, p Page) ([]herald.Alert, int, error) {
	cs := alerts(groupID)
	return list[herald.Alert](ctx, s, cs, cs.index("config", configID), TimeRange{}, true, p)
}

// GlobalConfigAlerts lists the active alerts a global configuration opened, newest first.
func (s *Store) GlobalConfigAlerts(ctx context.Context, configID string, p Page) ([]herald.Alert, int, error) {
	cs := globalAlerts()
	return list[herald.Alert](ctx, s, cs, cs.index("config", configID), TimeRange{}, true, p)
}

// UpdateAlert changes an alert (global, or of project groupID); change says which events it
// makes. Status changes move the alert between indexes in the same transaction.
func (s *Store) UpdateAlert(ctx context.Context, global bool, groupID, id string, change func(*herald.Alert) ([]herald.Event, error)) (herald.Alert, error) {
	if !herald.ValidID(id) {
		return herald.Alert{}, errAlertNotFound(id)
	}
	cs := alertCollection(global, groupID)
	evc := events(groupID, "")
	if global {
		evc = events("", "")
	}
	var prev string
	var notified *redis.StringCmd // read in the commit: on the document's slot, a global alert's too
	a, err := update(ctx, s, cs.doc(id), errAlertNotFound(id), evc,
		func(a *herald.Alert) ([]herald.Event, error) {
			prev = a.Status
			return change(a)
		},
		func(a herald.Alert, pipe redis.Pipeliner) {
			keepNotified(ctx, pipe, cs, &a)
			indexAlert(ctx, pipe, cs, a, prev)
			notified = readNotified(ctx, pipe, alertScope(cs, &a), id)
		})
	if err != nil {
		return a, err
	}
	return a, setNotified(&a, notified)
}

// GlobalConfigAlertsOfProject lists the active alerts a global configuration opened in one
// project (at most p.Limit, after the first p.Offset), reading the configuration's index a
// page at a time.
func (s *Store) GlobalConfigAlertsOfProject(ctx context.Context, configID, groupID string, p Page) ([]herald.Alert, int, error) {
	var out []herald.Alert
	skip := p.Offset
	for off := 0; len(out) < p.Limit; off += 500 {
		page, _, err := s.GlobalConfigAlerts(ctx, configID, Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, 0, err
		}
		for _, a := range page {
			switch {
			case a.GroupID != groupID || len(out) >= p.Limit:
			case skip > 0:
				skip--
			default:
				out = append(out, a)
			}
		}
		if len(page) < 500 {
			break
		}
	}
	return out, len(out), nil
}

// GlobalConfigProjects lists the projects in which a global configuration has active alerts.
func (s *Store) GlobalConfigProjects(ctx context.Context, configID string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for off := 0; ; off += 500 {
		page, _, err := s.GlobalConfigAlerts(ctx, configID, Page{Offset: off, Limit: 500})
		if err != nil {
			return nil, err
		}
		for _, a := range page {
			if !seen[a.GroupID] {
				seen[a.GroupID] = true
				out = append(out, a.GroupID)
			}
		}
		if len(page) < 500 {
			return out, nil
		}
	}
}

// ProjectAlertRead reads project groupID and its alert id in one round trip (both live on the
// project's slot, and are read by one MGET, the alert's lastNotified by an HGET beside it):
// its own (Fetch) or another's (CheckAuth). It holds its commands and what it decodes, and
// takes the keys and what was last decoded of the same documents from polledReads, so that a
// polling request's read costs an allocation or two rather than its keys', its commands' and
// the documents' each.
type ProjectAlertRead struct {
	groupID, id string
	polled      *polledAlert    // the pair's keys and last documents (nil when id is not an id)
	from        *polledDocs     // the documents Decode found, as kept in polled (nil: none kept)
	docs        *redis.SliceCmd // the project's document, then the alert's (when id is an id): &mget once queued
	mget        redis.SliceCmd
	notified    redis.StringCmd // the alert's lastNotified in its reach hash, read with it
	args        [2]any
	project     herald.Project // as decoded by Decode
	alert       herald.Alert
}

// ReadProjectAlert is the read of project groupID and its alert id.
func ReadProjectAlert(groupID, id string) *ProjectAlertRead {
	return &ProjectAlertRead{groupID: groupID, id: id}
}

func (r *ProjectAlertRead) queue(ctx context.Context, pipe redis.Pipeliner) {
	if !herald.ValidID(r.groupID) {
		return
	}
	if !herald.ValidID(r.id) { // the project alone, to tell its absence from the alert's
		r.args = [2]any{"mget", projectDoc(r.groupID)} // as go-redis's MGet: "mget" and the keys
		r.mget = *redis.NewSliceCmd(ctx, r.args[:]...)
		r.docs = &r.mget
		_ = pipe.Process(ctx, r.docs) // a pipeline's Process only queues
		return
	}
	r.polled = polledReads.of(r.groupID, r.id)
	r.mget = *redis.NewSliceCmd(ctx, r.polled.mget...)
	r.docs = &r.mget
	_ = pipe.Process(ctx, r.docs)
	r.notified = *redis.NewStringCmd(ctx, r.polled.hget...)
	_ = pipe.Process(ctx, &r.notified)
}

// Decode decodes what was read into r (Project, Alert): found says whether the project
// exists; err is then the alert's error (NotFound when it has no alert id), else the
// project's. What could not be decoded is left as far as it was.
func (r *ProjectAlertRead) Decode() (found bool, err error) {
	r.project, r.alert, r.from = herald.Project{}, herald.Alert{}, nil // decoded into here, not on the heap of their own
	if r.docs == nil {
		return false, errProjectNotFound(r.groupID)
	}
	docs, err := r.docs.Result()
	if err != nil {
		return false, err
	}
	if r.polled != nil {
		if r.from = r.polled.decoded(docs, &r.project, &r.alert); r.from != nil {
			return true, setNotified(&r.alert, &r.notified)
		}
	}
	if err := decodeValue(docs, 0, r.docs, &r.project, func() error { return errProjectNotFound(r.groupID) }); err != nil {
		return false, err
	}
	if len(docs) < 2 {
		return true, errAlertNotFound(r.id)
	}
	if err := decodeValue(docs, 1, r.docs, &r.alert, func() error { return errAlertNotFound(r.id) }); err != nil {
		return true, err
	}
	if r.polled != nil {
		r.from = r.polled.keep(docs, r.project, r.alert)
	}
	return true, setNotified(&r.alert, &r.notified)
}

// Project and Alert are where Decode decoded them: what the caller reads and answers from,
// without copies (the alert's on the heap, once given as a reply). They are r's, and decoded
// again by each call of Decode. Their slices and maps may be shared with other reads of the
// same documents: they are to be read, never changed.
func (r *ProjectAlertRead) Project() *herald.Project { return &r.project }
func (r *ProjectAlertRead) Alert() *herald.Alert     { return &r.alert }

// Encoded is the caller's encoding of the alert as Decode decoded it, made by encode and kept
// with the documents it was decoded from: a read of the same documents with the same
// lastNotified, by a caller giving the same tag (whatever else its encoding holds), gets the
// bytes kept, without encode. They are to be read, never changed.
func (r *ProjectAlertRead) Encoded(tag string, encode func(*herald.Alert) ([]byte, error)) ([]byte, error) {
	if r.from == nil {
		return encode(&r.alert)
	}
	notified := r.notified.Val()
	if e := r.from.encoded.Load(); e != nil && e.tag == tag && e.notified == notified {
		return e.bytes, nil
	}
	b, err := encode(&r.alert)
	if err == nil {
		r.from.encoded.Store(&polledEncoding{tag: tag, notified: notified, bytes: b})
	}
	return b, err
}
