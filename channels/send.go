package channels

import (
	"context"
	"io"
	"net/http"
	"sync"
)

var defaultClient = sync.OnceValue(func() *http.Client { return NewHTTPClient(false, DefaultTimeout) })

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
	if client.Timeout > 0 {
		// The client's timeout becomes the request context's deadline. net/http enforces a
		// client's own Timeout, over a transport that is not its own Transport (ours wraps
		// one), with a goroutine, a timer and a cancel channel a request, and the Transport
		// waits on that channel with a goroutine of its own; a context's deadline costs a
		// timer. Either bounds the whole exchange, the answer's body included.
		ctx, cancel := context.WithTimeout(req.Context(), client.Timeout)
		defer cancel()
		req = req.WithContext(ctx)
		untimed := *client
		untimed.Timeout = 0
		client = &untimed
	}
	resp, err := client.Do(req)
	if err != nil {
		return Classify(nil, err)
	}
	defer resp.Body.Close()
	if check == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 2*maxDrain))
		return Classify(resp, nil)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxDrain))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	if err := Classify(resp, nil); err != nil {
		return err
	}
	return check(resp, body)
}
