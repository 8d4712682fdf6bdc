package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
)

// keptAlertReader is a project p's read-only key that both API processes of e keep, and the
// path of an alert p does not have (read: 404; refused: 401 or 429).
func keptAlertReader(t *testing.T) (e *env, p string, kk *keptKeyOnTwo, path string) {
	t.Helper()
	e = newEnv(t)
	org := e.org("acme")
	p = e.project(org, "prod")
	kk = keepOnTwo(t, e, e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly}), p)
	return e, p, kk, "/groups/" + p + "/alerts/" + herald.NewID(time.Now())
}

// Reading an alert, whose authentication check goes in the read's round trip, refuses what
// authenticate refuses, on every process that keeps the key: a nonce count used on another
// process gets a challenge and nothing of the alert, and a lower count too.
func TestAlertReadReplayRefusedOnAnotherProcess(t *testing.T) {
	_, _, kk, path := keptAlertReader(t)
	auth := digestHeader(kk.key.user, kk.key.pass, kk.nonce, 7, "GET", api.BasePath+path)
	raw(t, "GET", kk.first+path, auth, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
	replay := raw(t, "GET", kk.next+path, auth, nil).wantStatus(http.StatusUnauthorized)
	if replay.Header.Get("WWW-Authenticate") == "" {
		t.Error("a replay gets a new challenge")
	}
	kk.do(kk.next, 6, "GET", path, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.next, 8, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
}

// A throttled name is refused (429) reading an alert with the right answer, on every process.
func TestAlertReadOfKeptKeyStillThrottled(t *testing.T) {
	_, _, kk, path := keptAlertReader(t)
	for i := range api.DefaultAuthLimits.PerPair {
		raw(t, "GET", kk.first+path, digestHeader(kk.key.user, "wrong", kk.nonce, 100+i, "GET", api.BasePath+path), nil).
			wantStatus(http.StatusUnauthorized)
	}
	for nc, base := range map[int]string{200: kk.first, 201: kk.next} {
		if r := kk.do(base, nc, "GET", path, nil).wantError(http.StatusTooManyRequests, herald.CodeRateLimited); r.Header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	}
}

// A key changed through another process is read again at its next alert read, and the read
// served by what it is now: answered once, its nonce count used once.
func TestAlertReadByKeptKeyChangedOnAnotherProcess(t *testing.T) {
	e, p, kk, path := keptAlertReader(t)
	kk.do(kk.next, 3, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)

	e.Owner.do("PATCH", "/groups/"+p+"/apiKeys/"+kk.key.KeyID, map[string]any{"roles": []string{herald.GroupOwner}}).wantStatus(http.StatusOK)
	kk.do(kk.next, 4, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
	kk.do(kk.next, 4, "GET", path, nil).wantStatus(http.StatusUnauthorized)
	kk.do(kk.first, 5, "GET", path, nil).wantError(http.StatusNotFound, herald.CodeAlertNotFound)
}

// Kept keys reading their alerts all at once, their checks and reads sharing Redis round
// trips: each gets its own project's alert, and each nonce count is used at most once (the
// same answer sent again at once is refused, whichever round trip it lands in; a count that
// lands after a higher one is refused too), the highest exactly once.
func TestConcurrentAlertReadsEachGetTheirOwn(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	type reader struct {
		user, pass, nonce, path, alertID string
	}
	readers := make([]reader, 16)
	for i := range readers {
		p := e.project(org, fmt.Sprint("p", i))
		a := saveTestAlert(t, e, false, hostDownAlert(p, "OPEN", time.Now()))
		k := e.key(org, herald.Role{GroupID: p, RoleName: herald.GroupReadOnly})
		path := "/groups/" + p + "/alerts/" + a.ID
		nonce := challengeParam(raw(t, "GET", e.Base+path, "", nil).Header.Get("WWW-Authenticate"), "nonce")
		raw(t, "GET", e.Base+path, digestHeader(k.user, k.pass, nonce, 1, "GET", api.BasePath+path), nil).wantStatus(http.StatusOK)
		readers[i] = reader{k.user, k.pass, nonce, path, a.ID}
	}
	type answer struct {
		reader, nc, status int
		id                 string
		err                error
	}
	const rounds = 5
	answers := make(chan answer, 2*rounds*len(readers))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rd := range readers {
		for nc := 2; nc < 2+rounds; nc++ {
			auth := digestHeader(rd.user, rd.pass, rd.nonce, nc, "GET", api.BasePath+rd.path)
			for range 2 { // the answer, and the same answer again
				wg.Go(func() {
					<-start
					req, _ := http.NewRequest("GET", e.Base+rd.path, nil)
					req.Header.Set("Authorization", auth)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						answers <- answer{reader: i, nc: nc, err: err}
						return
					}
					defer resp.Body.Close()
					var body struct{ ID string }
					_ = json.NewDecoder(resp.Body).Decode(&body)
					answers <- answer{reader: i, nc: nc, status: resp.StatusCode, id: body.ID}
				})
			}
		}
	}
	close(start)
	wg.Wait()
	close(answers)
	served := make([]map[int]int, len(readers)) // per reader, times each count was served
	for i := range served {
		served[i] = map[int]int{}
	}
	for a := range answers {
		switch {
		case a.err != nil:
			t.Error(a.err)
		case a.status == http.StatusOK && a.id != readers[a.reader].alertID:
			t.Errorf("reader %d got alert %s, not its own %s", a.reader, a.id, readers[a.reader].alertID)
		case a.status == http.StatusOK:
			served[a.reader][a.nc]++
		case a.status != http.StatusUnauthorized:
			t.Errorf("reader %d: status %d", a.reader, a.status)
		}
	}
	for i, counts := range served {
		for nc, n := range counts {
			if n > 1 {
				t.Errorf("reader %d: count %d served %d times", i, nc, n)
			}
		}
		if highest := 1 + rounds; counts[highest] != 1 {
			t.Errorf("reader %d: its highest count %d served %d times, want once", i, highest, counts[highest])
		}
	}
}
