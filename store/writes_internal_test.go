package store

import (
	"strconv"
	"testing"
	"time"

	"github.com/heraldhq/herald"
)

// The keys a transaction keeps are the keys its scope's functions build, for a project's
// scope and the global one of a project, and a writes that goes on to another scope gathers
// under that scope's keys.
func TestScopeKeysAreTheScopesKeys(t *testing.T) {
	now := time.Now()
	gid, other := herald.NewID(now), herald.NewID(now)
	w := newWrites()
	for _, sc := range []Scope{{GroupID: gid}, {GroupID: gid, Global: true}, {GroupID: other}, {GroupID: gid}} {
		k := w.scopeKeys(sc)
		for i := range 2 { // built, then kept
			got := map[string]string{
				"alert doc": k.docPrefix + "0123456789abcdef01234567", "schedules": k.schedules, "due": k.due,
				"outbox": k.outbox, "expiring": k.expiry, "event docs": k.eventDocs, "event types": k.eventTypes,
				"status index": k.index("status", herald.StatusOpen), "config index": k.index("config", "c1"),
				"opens": k.opensOf("c1"), "events of type": k.eventsOfType("HOST_DOWN"),
				"status index 2": k.index("status", herald.StatusClosed), "config index 2": k.index("config", "c2"),
				"opens 2": k.opensOf("c2"), "events of type 2": k.eventsOfType("ALERT_CLOSED"),
			}
			want := map[string]string{
				"alert doc": sc.alerts().doc("0123456789abcdef01234567"), "schedules": sc.schedules(), "due": sc.due(),
				"outbox": sc.outbox(), "expiring": sc.expiring(), "event docs": sc.events().docsHash(),
				"event types": eventTypesSet(sc.events()), "status index": sc.alerts().index("status", herald.StatusOpen),
				"config index": sc.alerts().index("config", "c1"), "opens": sc.opens("c1"),
				"events of type": eventsOfType(sc.events(), "HOST_DOWN"),
				"status index 2": sc.alerts().index("status", herald.StatusClosed), "config index 2": sc.alerts().index("config", "c2"),
				"opens 2": sc.opens("c2"), "events of type 2": eventsOfType(sc.events(), "ALERT_CLOSED"),
			}
			for name, key := range want {
				if got[name] != key {
					t.Errorf("%+v (%d): %s key %q, want %q", sc, i, name, got[name], key)
				}
			}
		}
	}
}

// A ZADD's score is sent as go-redis sends a float (strconv 'f', -1), whichever score was
// given before it.
func TestScoreArgIsGoRedisFloat(t *testing.T) {
	w := newWrites()
	for _, f := range []float64{1795538225, 1795538225, 1795541825123, 0, 0.5, -3, 1795538225, 1e21} {
		if got, want := w.scoreArgOf(f), strconv.FormatFloat(f, 'f', -1, 64); got != want {
			t.Errorf("score %v sent as %v, want %q", f, got, want)
		}
	}
}

// Each command is gathered whole: its name, its key, then its arguments in the order given.
func TestWritesGatherWholeCommands(t *testing.T) {
	w := newWrites()
	w.zAdd("z", 2, "a")
	w.zAdd("z", 2, "b")
	w.zRem("z", "c", "d")
	w.hSet("h", "f", []byte("v"))
	w.hDel("h", "g")
	w.mSet("k1", []byte("1"))
	w.mSet("k2", []byte("2"))
	for name, tc := range map[string]struct{ got, want []any }{
		"zadd": {w.zadd["z"], []any{"zadd", "z", "2", "a", "2", "b"}},
		"zrem": {w.zrem["z"], []any{"zrem", "z", "c", "d"}},
		"hset": {w.hset["h"], []any{"hset", "h", "f", "v"}},
		"hdel": {w.hdel["h"], []any{"hdel", "h", "g"}},
		"mset": {w.set, []any{"mset", "k1", "1", "k2", "2"}},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s: %q, want %q", name, tc.got, tc.want)
			continue
		}
		for i := range tc.got {
			if b, ok := tc.got[i].([]byte); ok {
				tc.got[i] = string(b)
			}
			if tc.got[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", name, tc.got, tc.want)
				break
			}
		}
	}
}
