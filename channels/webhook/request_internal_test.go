package webhook

import (
	"context"
	"io"
	"net/url"
	"testing"

	"github.com/heraldhq/herald/channels"
)

// request builds the POST as http.NewRequest would from the URL webhookTarget parsed: the
// host without an empty port, the body's length, a body that can be read again (for a retry
// on a reused connection), and the headers under their canonical names.
func TestRequestIsWhatNewRequestBuilds(t *testing.T) {
	u, err := url.Parse("http://hooks.example.com:/in?x=1")
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"a1"}`)
	req := request(context.Background(), u, body, channels.Delivery{ID: "d1", Event: channels.EventOpen}, "s3cret")
	if req.Method != "POST" || req.Host != "hooks.example.com" || req.URL.String() != "http://hooks.example.com:/in?x=1" ||
		req.ContentLength != int64(len(body)) || req.ProtoMajor != 1 {
		t.Errorf("request: %s %s host %q length %d proto %d", req.Method, req.URL, req.Host, req.ContentLength, req.ProtoMajor)
	}
	for _, b := range []func() (io.ReadCloser, error){func() (io.ReadCloser, error) { return req.Body, nil }, req.GetBody} {
		rc, err := b()
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(rc); string(got) != string(body) {
			t.Errorf("body %q, want %q", got, body)
		}
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "User-Agent": userAgent,
		"X-Vendor-Event": string(channels.EventOpen), "Idempotency-Key": "d1", "X-Vendor-Signature": sign("s3cret", body)} {
		if got := req.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if req.Context() == nil {
		t.Error("no context")
	}
}
