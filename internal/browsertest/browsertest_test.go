package browsertest

import (
	"slices"
	"testing"
)

// pageRequests keeps the requests that chromium's network log attributes to the page's site,
// once each, and leaves out the browser's own (whose isolation key is "null null" or another
// site's).
func TestPageRequests(t *testing.T) {
	log := []byte(`{"constants":{"logEventTypes":{"REQUEST_ALIVE":1,"URL_REQUEST_START_JOB":2}},"events":[
		{"type":2,"params":{"url":"http://clients2.google.com/time/1/current","network_isolation_key":"null null"}},
		{"type":2,"params":{"url":"http://127.0.0.1:4321/api/docs","network_isolation_key":"http://127.0.0.1 http://127.0.0.1"}},
		{"type":1,"params":{"url":"http://127.0.0.1:4321/ignored-other-event"}},
		{"type":2,"params":{"url":"https://fonts.googleapis.com/css","network_isolation_key":"http://127.0.0.1 http://127.0.0.1"}},
		{"type":2,"params":{"url":"http://127.0.0.1:4321/api/docs","network_isolation_key":"http://127.0.0.1 http://127.0.0.1"}},
		{"type":2,"params":{"url":"https://accounts.google.com/ListAccounts","network_isolation_key":"https://google.com https://google.com"}}]}`)
	got, err := pageRequests(log, "http://127.0.0.1:4321/api/docs")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://127.0.0.1:4321/api/docs", "https://fonts.googleapis.com/css"}
	if !slices.Equal(got, want) {
		t.Errorf("pageRequests = %q, want %q", got, want)
	}
	if out := Outside(got, "http://127.0.0.1:4321"); !slices.Equal(out, want[1:]) {
		t.Errorf("Outside = %q, want the font only", out)
	}
	if out := Outside([]string{"data:,", "blob:http://127.0.0.1:4321/x"}, "http://127.0.0.1:4321"); len(out) != 0 {
		t.Errorf("Outside counts data: and blob: URLs: %q", out)
	}
}
