package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// The slots a bucket hands out, step by step, at given times: a burst at once, then one per
// interval in the order asked; a delivery keeps its slot until released; a pause gives the
// refused delivery the first slot after it and the others waiting theirs in their order, and
// a later one comes after them all; a quiet spell refills the burst.
func TestPaceSlots(t *testing.T) {
	ctx := context.Background()
	st := store.New(storetest.Redis(t))
	p := store.Pace{Every: time.Second, Burst: 3}
	t0 := time.UnixMilli(1_800_000_000_000)
	key := store.PaceKey("SMS", "+15550100")
	steps := []struct {
		name     string
		op       string // reserve, release, pause
		id       string
		at, want time.Duration // from t0
	}{
		{"a burst goes at once", "reserve", "a", 0, 0},
		{"a burst goes at once", "reserve", "b", 0, 0},
		{"the burst's last", "reserve", "c", 0, 0},
		{"then one a second", "reserve", "d", 0, time.Second},
		{"in the order asked", "reserve", "e", 0, 2 * time.Second},
		{"a delivery keeps its slot", "reserve", "d", 500 * time.Millisecond, time.Second},
		{"tried", "release", "d", time.Second, 0},
		{"a new try takes the next slot", "reserve", "d", time.Second, 3 * time.Second},
		{"f waits behind d", "reserve", "f", time.Second, 4 * time.Second},
		{"a was sent", "release", "a", time.Second, 0},
		{"b was sent", "release", "b", time.Second, 0},
		{"c was sent", "release", "c", time.Second, 0},
		{"e was sent", "release", "e", 2 * time.Second, 0},
		{"f's task runs late, after g asked", "reserve", "g", 2 * time.Second, 5 * time.Second},
		{"d is refused for 8 s", "pause", "d", 2 * time.Second, 10 * time.Second},
		{"g's task runs first: its place in the line stays", "reserve", "g", 3 * time.Second, 12 * time.Second},
		{"the refused one goes first after the pause", "reserve", "d", 3 * time.Second, 10 * time.Second},
		{"then the line in its order", "reserve", "f", 3 * time.Second, 11 * time.Second},
		{"a new one comes after the line", "reserve", "h", 3 * time.Second, 13 * time.Second},
		{"a quiet spell refills the burst", "reserve", "i", 100 * time.Second, 100 * time.Second},
		{"a quiet spell refills the burst", "reserve", "j", 100 * time.Second, 100 * time.Second},
		{"a quiet spell refills the burst", "reserve", "k", 100 * time.Second, 100 * time.Second},
		{"then one a second again", "reserve", "l", 100 * time.Second, 101 * time.Second},
	}
	for i, s := range steps {
		now := t0.Add(s.at)
		switch s.op {
		case "release":
			if err := st.ReleasePace(ctx, key, s.id); err != nil {
				t.Fatal(err)
			}
		case "pause":
			if err := st.PausePace(ctx, key, s.id, p, t0.Add(s.want), now); err != nil {
				t.Fatal(err)
			}
		default:
			got, err := st.ReservePace(ctx, key, s.id, p, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := t0.Add(s.want); !got.Equal(want) {
				t.Errorf("step %d (%s): %s at +%s got slot +%s, want +%s", i, s.name, s.id, s.at, got.Sub(t0), s.want)
			}
		}
	}
	other, err := st.ReservePace(ctx, store.PaceKey("SMS", "+15550199"), "a", p, t0.Add(2*time.Second))
	if err != nil || !other.Equal(t0.Add(2*time.Second)) {
		t.Errorf("another target's first slot: %s, %v; want now: targets share nothing", other.Sub(t0), err)
	}
}

// A target's key never shows what names it (an address, a key, a URL with a token), and
// differs by kind and target.
func TestPaceKey(t *testing.T) {
	secret := "https://hooks.example.com/T000/B000/XXXXSECRET"
	k := store.PaceKey("CHAT_C", secret)
	if strings.Contains(k, "SECRET") || strings.Contains(k, "example") {
		t.Errorf("key %q shows its target", k)
	}
	if k == store.PaceKey("WEBHOOK", secret) || k == store.PaceKey("CHAT_C", secret+"x") || k != store.PaceKey("CHAT_C", secret) {
		t.Error("keys are not one per kind and target")
	}
}

// A paused bucket's hash lives at least until the pause ends, and an idle one expires.
func TestPaceExpires(t *testing.T) {
	ctx := context.Background()
	rdb := storetest.Redis(t)
	st := store.New(rdb)
	key := store.PaceKey("EMAIL", "a@example.com")
	now := time.Now()
	if _, err := st.ReservePace(ctx, key, "a", store.Pace{Every: time.Second, Burst: 1}, now); err != nil {
		t.Fatal(err)
	}
	if err := st.PausePace(ctx, key, "a", store.Pace{Every: time.Second, Burst: 1}, now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	ttl, err := rdb.PTTL(ctx, key).Result()
	if err != nil || ttl < time.Hour || ttl > 2*time.Hour {
		t.Errorf("a bucket paused for an hour expires in %s (%v), want just over an hour", ttl, err)
	}
	idle := store.PaceKey("EMAIL", "b@example.com")
	if _, err := st.ReservePace(ctx, idle, "a", store.Pace{Every: time.Second, Burst: 1}, now); err != nil {
		t.Fatal(err)
	}
	if ttl, err := rdb.PTTL(ctx, idle).Result(); err != nil || ttl <= 0 || ttl > time.Hour {
		t.Errorf("a bucket used once expires in %s (%v), want within minutes", ttl, err)
	}
}
