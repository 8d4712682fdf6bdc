package api_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/browsertest"
)

// The OpenAPI document and its viewer need no key; the viewer's page may load only from the
// server, and they answer only GET and HEAD.
func TestDocsArePublic(t *testing.T) {
	e := newEnv(t)
	doc := raw(t, "GET", e.srv.URL+api.OpenAPIPath, "", nil).wantStatus(200)
	var d struct {
		OpenAPI string
		Info    struct{ Title string }
		Paths   map[string]any
	}
	if err := json.Unmarshal(doc.Raw, &d); err != nil || !strings.HasPrefix(d.OpenAPI, "3.") || d.Info.Title != "Herald API" || len(d.Paths) == 0 {
		t.Fatalf("%s is not Herald's OpenAPI 3 document (%v): %.200s", api.OpenAPIPath, err, doc.Raw)
	}
	for _, path := range []string{api.DocsPath, api.DocsPath + "/redoc.standalone.js"} {
		r := raw(t, "GET", e.srv.URL+path, "", nil).wantStatus(200)
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "http") {
			t.Errorf("%s: Content-Security-Policy %q, want only 'self'", path, csp)
		}
	}
	raw(t, "POST", e.srv.URL+api.OpenAPIPath, "", nil).wantError(405, "METHOD_NOT_ALLOWED")
}

// Redoc, served from the binary at /api/docs, renders the API's document in headless
// chromium: the page shows the API's title and its endpoints, and the browser asked nothing
// of any host but the test's server on 127.0.0.1 (no CDN, no web fonts). With
// go test -artifacts, the DOM and a screenshot are kept.
func TestDocsViewerRendersInABrowser(t *testing.T) {
	chrome := browsertest.Find(t)
	e := newEnv(t)
	page := e.srv.URL + api.DocsPath
	dom, requested := chrome.Run(t, "--dump-dom", page)
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), "docs.html"), []byte(dom), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Herald API", "Acknowledge an alert", "/groups/{groupId}/alerts/{alertId}", "List global events", "acknowledgedUntil"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page chromium rendered does not show %q", want)
		}
	}
	for _, u := range browsertest.Outside(requested, e.srv.URL) {
		t.Errorf("the page made a request outside the server: %s", u)
	}
	if len(requested) < 3 { // the page, Redoc's bundle and the document
		t.Errorf("the network log shows %d requests, want the page, the bundle and the document: %q", len(requested), requested)
	}
	chrome.Screenshot(t, filepath.Join(t.ArtifactDir(), "docs.png"), page)
}
