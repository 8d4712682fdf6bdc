package channels

import (
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
// Every HTTP sender ends with it.
func Send(client *http.Client, req *http.Request) error {
	if client == nil {
		client = defaultClient()
	}
	resp, err := client.Do(req)
	if err != nil {
		return Classify(nil, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	return Classify(resp, nil)
}
