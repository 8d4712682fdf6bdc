package channels

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald/channels/channelstest"
)

// The client's Timeout covers reading the answer's body: a target that sends its headers and
// then stalls does not hold the delivery.
func TestTimeoutCoversTheBody(t *testing.T) {
	release := make(chan struct{})
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		<-release
	})
	defer close(release) // before the receiver closes (cleanup), which waits for the handler
	client := NewHTTPClient(true, 200*time.Millisecond)
	done := make(chan error, 1)
	go func() {
		done <- Exchange(client, postRequest(t, rc.URL), func(*http.Response, []byte) error { return nil })
	}()
	select {
	case <-done: // the answer was 200: what the body read ended with is not a failure
	case <-time.After(10 * time.Second):
		t.Fatal("the exchange is still reading a stalled body 10 s after its 200 ms timeout")
	}
}

// A URL's credentials are sent as Basic auth (Client.Do's way).
func TestURLCredentialsSentAsBasicAuth(t *testing.T) {
	rc := channelstest.NewReceiver(t, nil)
	client := NewHTTPClient(true, 5*time.Second)
	target := strings.Replace(rc.URL, "http://", "http://hook-user:hook-pw@", 1)
	if err := Send(client, postRequest(t, target)); err != nil {
		t.Fatal(err)
	}
	r := rc.Only(t)
	req := http.Request{Header: r.Header}
	if u, p, ok := req.BasicAuth(); !ok || u != "hook-user" || p != "hook-pw" {
		t.Errorf("Authorization %q, want Basic auth of the URL's user and password", r.Header.Get("Authorization"))
	}
}

// A client Herald did not make keeps Client.Do's behaviour: this one follows a redirect.
func TestOtherClientsKeepClientDo(t *testing.T) {
	moved := channelstest.NewReceiver(t, nil)
	rc := channelstest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, moved.URL+"/moved", http.StatusTemporaryRedirect)
	})
	if err := Send(&http.Client{Timeout: 5 * time.Second}, postRequest(t, rc.URL)); err != nil {
		t.Fatalf("Send: %v, want the redirect followed to a 200", err)
	}
	if n := len(moved.Requests()); n != 1 {
		t.Errorf("redirect target got %d requests, want 1", n)
	}
}

func postRequest(t *testing.T, target string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, target, strings.NewReader(`{"id":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// reqSeen is a transport that records the request it was given and answers 204.
type reqSeen struct{ req *http.Request }

func (r *reqSeen) RoundTrip(req *http.Request) (*http.Response, error) {
	r.req = req
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: req}, nil
}

// A client's timeout reaches a transport of Herald's (not net/http's own) as the request
// context's deadline, with no legacy cancel channel, for which net/http would start a
// goroutine and a timer a request.
func TestTimeoutIsTheContextsDeadline(t *testing.T) {
	seen := &reqSeen{}
	client := &http.Client{Transport: seen, Timeout: time.Minute}
	if err := Send(client, postRequest(t, "http://hook.example/")); err != nil {
		t.Fatal(err)
	}
	if seen.req.Cancel != nil {
		t.Error("the request came with a cancel channel: the timeout was enforced by a goroutine a request")
	}
	deadline, ok := seen.req.Context().Deadline()
	if left := time.Until(deadline); !ok || left <= 0 || left > time.Minute {
		t.Errorf("the request's deadline is %v away (set: %v), want within the client's minute", left, ok)
	}
	if client.Timeout != time.Minute {
		t.Errorf("the client's timeout became %s", client.Timeout)
	}
}
