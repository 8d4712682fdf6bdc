package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// An alert is answered byte for byte alike wherever it is read: each result of a list of
// alerts (a project's, the global ones) is what a GET of the alert answers, and the GET's
// envelope and pretty forms hold the same alert.
func TestAlertListsAnswerEachAlertAsItsRead(t *testing.T) {
	ctx := context.Background()
	e, _, p := newProjectEnv(t)
	created := time.Now().Add(-time.Hour)
	plain := saveTestAlert(t, e, false, hostDownAlert(p, herald.StatusOpen, created))
	prom := hostDownAlert(p, herald.StatusOpen, created.Add(time.Minute))
	prom.EventTypeName, prom.Labels = "PROMETHEUS_ALERT", herald.Labels{"alertname": "Disk", "job": "<api> & more"}
	prom.CurrentValue = &herald.CurrentValue{Number: 1.5, Units: "RAW"}
	saveTestAlert(t, e, false, prom)
	global := hostDownAlert(p, herald.StatusOpen, created)
	global.Tags = []string{"production"}
	saveTestAlert(t, e, true, global)
	notified := created.Add(5 * time.Minute)
	for _, sc := range []store.Scope{{GroupID: p}, {GroupID: p, Global: true}} {
		if err := e.Store.MarkNotified(ctx, sc, map[string]time.Time{prom.ID: notified, global.ID: notified}); err != nil {
			t.Fatal(err)
		}
	}
	for list, n := range map[string]int{"/groups/" + p + "/alerts": 2, "/globalAlerts": 1} {
		var body struct{ Results []json.RawMessage }
		if err := json.Unmarshal(e.Owner.do("GET", list, nil).wantStatus(200).Raw, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Results) != n {
			t.Fatalf("%s: %d results, want %d", list, len(body.Results), n)
		}
		for _, res := range body.Results {
			var it struct {
				ID           string
				LastNotified string
				Links        []struct{ Href string }
			}
			if err := json.Unmarshal(res, &it); err != nil || len(it.Links) != 1 {
				t.Fatalf("%s: result %s: %v", list, res, err)
			}
			if (it.ID != plain.ID) != (it.LastNotified == iso(notified)) {
				t.Errorf("%s: alert %s lastNotified %q", list, it.ID, it.LastNotified)
			}
			self := it.Links[0].Href[len(e.Base):]
			one := e.Owner.do("GET", self, nil).wantStatus(200).Raw
			if !bytes.Equal(res, one) {
				t.Errorf("%s: result\n%s\nGET %s:\n%s", list, res, self, one)
			}
			var env struct{ Content json.RawMessage }
			if err := json.Unmarshal(e.Owner.do("GET", self+"?envelope=true", nil).wantStatus(200).Raw, &env); err != nil || !bytes.Equal(env.Content, one) {
				t.Errorf("GET %s?envelope=true: content %s (%v), want %s", self, env.Content, err, one)
			}
			var indented bytes.Buffer
			_ = json.Indent(&indented, one, "", "  ")
			if pretty := e.Owner.do("GET", self+"?pretty=true", nil).wantStatus(200).Raw; !bytes.Equal(pretty, indented.Bytes()) {
				t.Errorf("GET %s?pretty=true:\n%s\nwant\n%s", self, pretty, indented.Bytes())
			}
		}
	}
}

// The polled alert's answer, encoded once for what was read, follows every change: of the
// alert (an acknowledgement), of its lastNotified, and of the host it was asked of (its self
// link).
func TestPolledAlertAnswerFollowsChanges(t *testing.T) {
	ctx, now := context.Background(), time.Now()
	rig := newKeptReadRig(t)
	nonce, nc := rig.nonce(t), 0
	get := func(host string) []byte {
		t.Helper()
		nc++
		req := readRequest(t, rig.path, rig.authorization(nonce, nc))
		req.Host = host
		w := httptest.NewRecorder()
		rig.h.ServeHTTP(w, req)
		if w.Code != 200 {
			t.Fatalf("GET from %s: %d %s", host, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	first := get("127.0.0.1")
	if again := get("127.0.0.1"); !bytes.Equal(again, first) {
		t.Errorf("read again:\n%s\nfirst:\n%s", again, first)
	}
	other := get("other.example:8080")
	if !bytes.Contains(other, []byte(`"href":"http://other.example:8080`+rig.path+`"`)) || bytes.Contains(other, []byte("127.0.0.1")) {
		t.Errorf("asked of another host: %s", other)
	}
	if back := get("127.0.0.1"); !bytes.Equal(back, first) {
		t.Errorf("asked of the first host again:\n%s\nfirst:\n%s", back, first)
	}
	if _, err := rig.st.UpdateAlert(ctx, false, rig.alert.GroupID, rig.alert.ID, func(a *herald.Alert) ([]herald.Event, error) {
		_, err := a.Acknowledge(herald.At(now.Add(time.Hour)), "on it", "ann", now)
		return nil, err
	}); err != nil {
		t.Fatal(err)
	}
	if acked := get("127.0.0.1"); !bytes.Contains(acked, []byte(`"acknowledgingUsername":"ann"`)) {
		t.Errorf("after the acknowledgement: %s", acked)
	}
	later := now.Add(time.Hour)
	if err := rig.st.MarkNotified(ctx, store.Scope{GroupID: rig.alert.GroupID}, map[string]time.Time{rig.alert.ID: later}); err != nil {
		t.Fatal(err)
	}
	if notified := get("127.0.0.1"); !bytes.Contains(notified, []byte(`"lastNotified":"`+iso(later)+`"`)) {
		t.Errorf("after a notification at %s: %s", iso(later), notified)
	}
}
