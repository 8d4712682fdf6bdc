package webhook

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/heraldhq/herald/channels"
)

// request builds the POST as http.NewRequest would from the URL webhookTarget parsed: the
// host without an empty port, the body's length, a body that can be read again (for a retry
// on a reused connection), and the headers under their canonical names.
func TestRequestIsWhatNewRequestBuilds(t *testing.T) {
	u := targets.parse("http://hooks.example.com:/in?x=1")
	if u == nil {
		t.Fatal("not parsed")
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

// The cache of parsed targets answers what url.Parse and the check say, keeps what it parsed
// for the next delivery, keeps no URL that failed, stays bounded, and hands each request its
// own copy of the URL.
func TestTargetCache(t *testing.T) {
	c := targetCache{m: map[string]*parsedTarget{}}
	for _, bad := range []string{"ftp://x.example.com/", "/relative", "http://", "http://a b.example.com/", "%zz"} {
		if c.parse(bad) != nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if len(c.m) != 0 {
		t.Errorf("failed URLs kept: %v", c.m)
	}
	raw := "https://user:pw@hooks.example.com:8443/in?x=1#f"
	first := c.parse(raw)
	if first == nil || first.url.String() != raw || first.host != "hooks.example.com:8443" {
		t.Fatalf("parsed %+v", first)
	}
	if again := c.parse(raw); again != first {
		t.Error("parsed again rather than taken from the cache")
	}
	req := request(context.Background(), first, nil, channels.Delivery{ID: "d1", Event: channels.EventOpen}, "")
	req.URL.Path = "/changed"
	if first.url.Path != "/in" {
		t.Errorf("a request changed the cached URL: %s", first.url.String())
	}
	for i := range targetsKept + 10 {
		c.parse("http://h" + strconv.Itoa(i) + ".example.com/")
	}
	if n := len(c.m); n == 0 || n > targetsKept {
		t.Errorf("%d URLs kept, want 1..%d", n, targetsKept)
	}
}
