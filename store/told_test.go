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

// toldAttempt is an attempt about alert alertID's notice to user by email as the engine
// records it: PACED while it waits for a digest, DIGESTED once digest told of it.
func toldAttempt(alertID, user, digest string, at time.Time) store.Attempt {
	a := store.Attempt{At: herald.At(at), AlertID: alertID, DeliveryID: alertID + "-0-1-" + user + "-EMAIL", Kind: "EMAIL", Via: "EMAIL"}
	if digest == "" {
		a.Outcome, a.Waiting = store.OutcomePaced, true
		a.Reason = "waiting to go out in a digest with its target's other notices, from " + at.UTC().Format(time.RFC3339Nano)
		return a
	}
	a.Outcome, a.DigestID, a.Reason = store.OutcomeDigested, digest, store.DigestedReason(digest)
	return a
}

func alertDeliveries(t *testing.T, st *store.Store, gid, alertID string, p store.Page) ([]store.Attempt, int) {
	t.Helper()
	got, n, err := st.Attempts(context.Background(), gid, alertID, p)
	if err != nil {
		t.Fatal(err)
	}
	return got, n
}

func outcomes(as []store.Attempt) string {
	var b []string
	for _, a := range as {
		b = append(b, a.Outcome+" "+strings.TrimPrefix(a.DeliveryID, a.AlertID)+" "+a.DigestID)
	}
	return strings.Join(b, ", ")
}

// An alert's deliveries say which digest told whom about it after a storm's records overflowed
// the project's log: a waiting notice is one PACED record (not one per re-check, and not in
// the project's log), replaced by its DIGESTED one; each alert keeps its last few, newest
// first, merged with the log's, paged as before.
func TestAlertDeliveriesKeepDigestsBeyondTheLog(t *testing.T) {
	ctx := context.Background()
	_, st, gid := newProject(t)
	now := time.Now().Truncate(time.Second)
	alert, user := herald.NewID(now), herald.NewID(now)
	record := func(as ...store.Attempt) {
		t.Helper()
		if err := st.RecordAttempts(ctx, gid, as); err != nil {
			t.Fatal(err)
		}
	}
	// Sent alone first, then it waits (checked twice), then a digest tells of it.
	record(store.Attempt{At: herald.At(now), AlertID: alert, DeliveryID: alert + "-0-0-" + user + "-EMAIL", Kind: "EMAIL", Via: "EMAIL", Outcome: store.OutcomeDelivered})
	record(toldAttempt(alert, user, "", now.Add(time.Second)))
	record(toldAttempt(alert, user, "", now.Add(2*time.Second)))
	if got, n := alertDeliveries(t, st, gid, alert, store.Page{Limit: 10}); n != 2 || got[0].Outcome != store.OutcomePaced || got[0].At.Unix() != now.Add(2*time.Second).Unix() {
		t.Fatalf("while it waits: %d attempts (%s), want its last PACED then DELIVERED", n, outcomes(got))
	}
	if all, _, _ := st.Attempts(ctx, gid, "", store.Page{Limit: 10}); len(all) != 1 {
		t.Errorf("the project's log has %s, want only the DELIVERED attempt", outcomes(all))
	}
	const digest = "0123456789abcdef01234567"
	record(toldAttempt(alert, user, digest, now.Add(3*time.Second)))
	// A storm tells of many others.
	var storm []store.Attempt
	for range store.AttemptsKept + 100 {
		storm = append(storm, toldAttempt(herald.NewID(now), user, digest, now.Add(4*time.Second)))
	}
	record(storm...)
	got, n := alertDeliveries(t, st, gid, alert, store.Page{Limit: 10})
	if n != 2 || got[0].Outcome != store.OutcomeDigested || got[1].Outcome != store.OutcomeDelivered {
		t.Fatalf("after the storm: %s, want the DIGESTED attempt then the one sent alone", outcomes(got))
	}
	if all, n, _ := st.Attempts(ctx, gid, "", store.Page{Limit: 10}); n != 1 {
		t.Errorf("the project's log has %d attempts (%s), want only the one sent alone: digests' records are not its", n, outcomes(all))
	}
	// Messages sent alone to others fill the log many times over.
	var sends []store.Attempt
	for range store.AttemptsKept + 100 {
		id := herald.NewID(now)
		sends = append(sends, store.Attempt{At: herald.At(now.Add(4 * time.Second)), AlertID: id, DeliveryID: id + "-0-0", Kind: "WEBHOOK", Outcome: store.OutcomeDelivered})
	}
	record(sends...)
	got, n = alertDeliveries(t, st, gid, alert, store.Page{Limit: 10})
	if n != 1 || got[0].Outcome != store.OutcomeDigested || got[0].DigestID != digest || got[0].Reason != store.DigestedReason(digest) ||
		got[0].DeliveryID != alert+"-0-1-"+user+"-EMAIL" || got[0].AlertID != alert || got[0].Kind != "EMAIL" || got[0].Via != "EMAIL" {
		t.Fatalf("after the storm: %d attempts %+v, want the DIGESTED one", n, got)
	}

	// Each alert keeps its last few, newest first; the log's are merged in and paged.
	other := herald.NewID(now)
	for i := range 20 {
		record(toldAttempt(other, fmt.Sprintf("%024x", i), digest, now.Add(time.Duration(10+i)*time.Second)))
	}
	record(store.Attempt{At: herald.At(now.Add(30 * time.Second)), AlertID: other, DeliveryID: other + "-0-0", Kind: "WEBHOOK", Outcome: store.OutcomeDelivered})
	all, n := alertDeliveries(t, st, gid, other, store.Page{Limit: 100})
	if n != 17 || len(all) != 17 {
		t.Fatalf("%d attempts (%d listed), want 17: the record's last 16 and the log's one", n, len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.After(all[i-1].At.Time) {
			t.Fatalf("not newest first: %v after %v", all[i].At, all[i-1].At)
		}
	}
	if all[0].Kind != "WEBHOOK" {
		t.Errorf("the newest attempt, in the log, not first: %s", outcomes(all))
	}
	page, n := alertDeliveries(t, st, gid, other, store.Page{Offset: 5, Limit: 5})
	if n != 17 || len(page) != 5 || page[0] != all[5] || page[4] != all[9] {
		t.Errorf("page 2 of 5: %s of %d, want %s", outcomes(page), n, outcomes(all[5:10]))
	}
	// With the log gone (filled by others), the record keeps the alert's last 16.
	record(sends...)
	if got, n := alertDeliveries(t, st, gid, other, store.Page{Limit: 100}); n != 16 || got[0].DeliveryID != other+"-0-1-"+fmt.Sprintf("%024x", 19)+"-EMAIL" {
		t.Errorf("the record keeps %d: %s, want the last 16, newest first", n, outcomes(got))
	}

	// A global alert of the project keeps its own.
	global := toldAttempt(herald.NewID(now), user, digest, now)
	global.Global = true
	record(global)
	record(sends...)
	if got, n := alertDeliveries(t, st, gid, global.AlertID, store.Page{Limit: 10}); n != 1 || !got[0].Global || got[0].DigestID != digest {
		t.Errorf("a global alert's deliveries: %+v", got)
	}
}

// Notices never digested (webhooks) write no record of digests: a webhook storm costs nothing
// more.
func TestUndigestedAttemptsKeepNoRecord(t *testing.T) {
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	now := time.Now()
	var as []store.Attempt
	for i := range 100 {
		id := herald.NewID(now)
		outcome := []string{store.OutcomeDelivered, store.OutcomePaced, store.OutcomeRetrying, store.OutcomeSuperseded}[i%4]
		as = append(as, store.Attempt{At: herald.At(now), AlertID: id, DeliveryID: id + "-0-0", Kind: "WEBHOOK", Outcome: outcome})
	}
	if err := st.RecordAttempts(ctx, gid, as); err != nil {
		t.Fatal(err)
	}
	if keys, err := rdb.Keys(ctx, "*told*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys %v (%v), want none", keys, err)
	}
}

// The memory each alert's record of digests costs in the bench's storm for people: 10,000
// alerts opened, three owners by email and SMS and a chat channel (7 targets), each told of
// them in one digest per target.
func TestDigestRecordMemory(t *testing.T) {
	if !storetest.Real() {
		t.Skip("measured on a real redis-server")
	}
	ctx := context.Background()
	rdb, st, gid := newProject(t)
	now := time.Now()
	const alerts = 10_000
	ids := make([]string, alerts)
	for i := range ids {
		ids[i] = herald.NewID(now)
	}
	before := usedMemory(t, rdb)
	for target := range 7 {
		kind, user := "EMAIL", herald.NewID(now)
		switch {
		case target == 6:
			kind, user = "CHAT_B", ""
		case target >= 3:
			kind = "SMS"
		}
		digest := fmt.Sprintf("%024x", target)
		as := make([]store.Attempt, alerts)
		for i, id := range ids {
			a := store.Attempt{At: herald.At(now), AlertID: id, DeliveryID: id + "-0-1", Kind: kind, Outcome: store.OutcomeDigested,
				DigestID: digest, Reason: store.DigestedReason(digest)}
			if user != "" {
				a.DeliveryID, a.Via = id+"-0-1-"+user+"-"+kind, kind
			}
			as[i] = a
		}
		if err := st.RecordAttempts(ctx, gid, as); err != nil {
			t.Fatal(err)
		}
	}
	perAlert := (usedMemory(t, rdb) - before) / alerts
	t.Logf("Redis memory per alert told of in 7 digests: %d B (the capped log included)", perAlert)
	if perAlert > 1200 {
		t.Errorf("%d B per digested alert, want at most 1,200", perAlert)
	}
}

func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO")
	return 0
}
