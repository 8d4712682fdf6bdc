package channels

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

var defaultClient = sync.OnceValue(func() *http.Client { return NewHTTPClient(false, 10*time.Second) })

// maxDrain is how much of an answer is read (and thrown away) so the connection can be reused.
const maxDrain = 64 << 10

// Send does req with client (the default one, refusing private addresses, when nil) and
// classifies the outcome, draining and closing the answer's body so the connection is reused.
// Every HTTP sender ends with it, or with Exchange.
func Send(client *http.Client, req *http.Request) error { return Exchange(client, req, nil) }

// Exchange is Send for a service that also says in a successful answer's body whether it took
// the message: check reads the first 64 KiB of a 2xx answer and returns nil or a *Failure.
func Exchange(client *http.Client, req *http.Request, check func(resp *http.Response, body []byte) error) error {
	if client == nil {
		client = defaultClient()
	}
	resp, cancel, err := do(client, req)
	if err != nil {
		return Classify(nil, err)
	}
	defer cancel() // after the body is closed (deferred below): the timeout covers reading it
	defer resp.Body.Close()
	if check == nil { // nothing reads the body: drained through io.Discard's pooled buffer
		if resp.Body != http.NoBody { // an empty answer (net/http's NoBody) has nothing to drain
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 2*maxDrain))
		}
		return Classify(resp, nil)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	if err := Classify(resp, nil); err != nil {
		return err
	}
	return check(resp, body)
}

// do is client.Do(req), and for a client of NewHTTPClient with nothing Client.Do would add (no
// cookie jar, no credentials in the URL to send as Basic auth) the same exchange straight
// through its transport: such a client follows no redirect (its CheckRedirect answers the
// last response, as RoundTrip does), and its Timeout, over the whole exchange including the
// answer's body, is a context deadline that cancel ends once the body is closed. Client.Do
// adds a copy of the headers (kept for redirects) and of the request, and wraps the body, on
// every request: a storm sends thousands a second, and in a profile of a 100,000-alert storm
// Client.Do cost 2.8 µs of a worker's CPU a delivery over RoundTrip's, some 1.2 of it the
// deadline this keeps. The errors differ only in Client.Do's *url.Error wrapping, which
// Classify looks through.
func do(client *http.Client, req *http.Request) (*http.Response, context.CancelFunc, error) {
	if !sendsDirect(client) || req.URL == nil || req.URL.User != nil || req.Header == nil || req.RequestURI != "" {
		resp, err := client.Do(req)
		return resp, func() {}, err
	}
	cancel := context.CancelFunc(func() {})
	if client.Timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), client.Timeout)
		req = req.WithContext(ctx)
	}
	resp, err := client.Transport.RoundTrip(req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// sendsDirect says whether client is one of NewHTTPClient's, as made: its transport's type
// says so, and it has no cookie jar to fill.
func sendsDirect(client *http.Client) bool {
	_, ok := client.Transport.(directTransport)
	return ok && client.Jar == nil
}
