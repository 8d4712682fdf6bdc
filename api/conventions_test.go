package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api"
)

// Five keys at two a page are three pages, linked both ways, with the caller's query kept.
func TestPaging(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 4; i++ { // the owner's key is the fifth
		e.Owner.do("POST", "/admin/apiKeys", map[string]any{"desc": fmt.Sprint("k", i), "roles": []string{"GLOBAL_READ_ONLY"}}).wantStatus(201)
	}
	seen := map[string]bool{}
	for page, want := range []int{2, 2, 1} {
		r := e.Owner.do("GET", fmt.Sprintf("/admin/apiKeys?itemsPerPage=2&pageNum=%d&pretty=false", page+1), nil).wantStatus(200)
		wantKeys(t, r.Body, "results", "links", "totalCount")
		if r.num("totalCount") != 5 {
			t.Fatalf("totalCount %v", r.Body["totalCount"])
		}
		items := r.results()
		if len(items) != want {
			t.Fatalf("page %d: %d items, want %d", page+1, len(items), want)
		}
		for _, it := range items {
			id := it["id"].(string)
			if seen[id] {
				t.Errorf("key %s on two pages", id)
			}
			seen[id] = true
		}
		self, _ := url.Parse(link(r.Body["links"], "self"))
		if self.Query().Get("pageNum") != fmt.Sprint(page+1) || self.Query().Get("itemsPerPage") != "2" || self.Query().Get("pretty") != "false" {
			t.Errorf("self link %s", self)
		}
		if !strings.HasPrefix(self.String(), e.Base+"/admin/apiKeys?") {
			t.Errorf("self link not absolute: %s", self)
		}
		next, prev := link(r.Body["links"], "next"), link(r.Body["links"], "previous")
		if (next != "") != (page < 2) {
			t.Errorf("page %d: next %q", page+1, next)
		}
		if (prev != "") != (page > 0) {
			t.Errorf("page %d: previous %q", page+1, prev)
		}
		if next != "" {
			if u, _ := url.Parse(next); u.Query().Get("pageNum") != fmt.Sprint(page+2) {
				t.Errorf("next %s", next)
			}
		}
	}
	if len(seen) != 5 {
		t.Errorf("%d distinct keys over the pages, want 5", len(seen))
	}
	empty := e.Owner.do("GET", "/admin/apiKeys?itemsPerPage=2&pageNum=9", nil).wantStatus(200)
	if len(empty.results()) != 0 || empty.num("totalCount") != 5 {
		t.Errorf("page past the end: %s", empty.Raw)
	}
	if !strings.Contains(string(empty.Raw), `"results":[]`) {
		t.Errorf("an empty page has results: [], got %s", empty.Raw)
	}
	for _, q := range []string{"itemsPerPage=501", "itemsPerPage=0", "pageNum=0", "pageNum=-1", "itemsPerPage=ten"} {
		e.Owner.do("GET", "/admin/apiKeys?"+q, nil).wantError(400, "INVALID_QUERY_PARAMETER")
	}
	e.Owner.do("GET", "/admin/apiKeys?itemsPerPage=500", nil).wantStatus(200)
}

func TestEnvelopeAndPretty(t *testing.T) {
	e, _, p := newProjectEnv(t)

	one := e.Owner.do("GET", "/groups/"+p+"/alertConfigs?itemsPerPage=1", nil).wantStatus(200).results()[0]
	path := "/groups/" + p + "/alertConfigs/" + one["id"].(string)
	r := e.Owner.do("GET", path+"?envelope=true", nil).wantStatus(200)
	wantKeys(t, r.Body, "status", "content")
	if r.num("status") != 200 {
		t.Errorf("envelope status %v", r.Body["status"])
	}
	content := r.Body["content"].(map[string]any)
	if content["id"] != one["id"] || link(content["links"], "self") != e.Base+path {
		t.Errorf("envelope content %v", content)
	}

	l := e.Owner.do("GET", "/groups/"+p+"/alertConfigs?envelope=true", nil).wantStatus(200)
	wantKeys(t, l.Body, "status", "results", "links", "totalCount")

	created := e.Owner.do("POST", "/orgs?envelope=true", map[string]any{"name": "other"}).wantStatus(201)
	if created.num("status") != 201 {
		t.Errorf("envelope status of a create %v", created.Body["status"])
	}

	pretty := e.Owner.do("GET", path+"?pretty=true", nil).wantStatus(200)
	if !strings.Contains(string(pretty.Raw), "\n  \"id\": ") {
		t.Errorf("pretty=true is not indented: %s", pretty.Raw)
	}
	if plain := e.Owner.do("GET", path, nil); strings.Contains(string(plain.Raw), "\n") {
		t.Errorf("the default is compact: %s", plain.Raw)
	}
	e.Owner.do("GET", path+"?envelope=maybe", nil).wantError(400, "INVALID_QUERY_PARAMETER")
}

func TestSuccessHeaders(t *testing.T) {
	e := newEnv(t)
	r := e.Owner.do("GET", "/globalEvents", nil)
	for h, want := range map[string]string{
		"X-Vendor-Service-Version":  "gitHash=testhash; versionString=test",
		"Strict-Transport-Security": "max-age=300",
		"Vary":                      "Accept-Encoding",
		"Content-Type":              "application/json",
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
	if r.Header.Get("Content-Length") == "" || r.Header.Get("Date") == "" {
		t.Error("Content-Length and Date are set")
	}
}

// Paths and methods no endpoint serves get the error body too, after authentication.
func TestUnroutedRequests(t *testing.T) {
	e := newEnv(t)
	raw(t, "GET", e.Base+"/nothing/here", "", nil).wantStatus(401)
	e.Owner.do("GET", "/nothing/here", nil).wantError(404, "RESOURCE_NOT_FOUND")
	r := e.Owner.do("DELETE", "/globalAlerts", nil).wantError(405, "METHOD_NOT_ALLOWED")
	var body map[string]any
	_ = json.Unmarshal(r.Raw, &body)
	if body["reason"] != "Method Not Allowed" {
		t.Errorf("405 reason %v", body["reason"])
	}
}

func TestBodyErrors(t *testing.T) {
	e := newEnv(t)
	e.Owner.do("POST", "/orgs", `{"name":`).wantError(400, "INVALID_JSON")
	e.Owner.do("POST", "/orgs", ``).wantError(400, "INVALID_JSON")
	e.Owner.do("POST", "/orgs", `{"name":"a"} {"name":"b"}`).wantError(400, "INVALID_JSON")
	e.Owner.do("POST", "/orgs", `[1,2]`).wantError(400, "INVALID_JSON")
	r := e.Owner.do("POST", "/orgs", `{"name":"a","colour":"red"}`).wantError(400, "INVALID_ATTRIBUTE")
	if p, _ := r.Body["parameters"].([]any); len(p) != 1 || p[0] != "colour" {
		t.Errorf("the unknown field is named: %v", r.Body["parameters"])
	}
	e.Owner.do("POST", "/orgs", `{"name":7}`).wantError(400, "INVALID_ATTRIBUTE")
	big := `{"name":"` + strings.Repeat("x", 33<<20) + `"}`
	e.Owner.do("POST", "/orgs", big).wantError(400, "REQUEST_TOO_LARGE")
}

// With an external URL configured, links use it rather than the request's host.
func TestExternalURLLinks(t *testing.T) {
	e := newEnvWith(t, api.Config{ExternalURL: "https://herald.example.com/"})
	r := e.Owner.do("GET", "/admin/apiKeys", nil).wantStatus(200)
	if got := link(r.Body["links"], "self"); !strings.HasPrefix(got, "https://herald.example.com/api/public/v1.0/admin/apiKeys?") {
		t.Errorf("self link %s", got)
	}
	item := r.results()[0]
	if got := link(item["links"], "self"); got != "https://herald.example.com/api/public/v1.0/admin/apiKeys/"+e.Owner.KeyID {
		t.Errorf("item self link %s", got)
	}
}

// A body naming an attribute twice in one object (as encoding/json matches names: in any case)
// is refused whole, rather than taking the last value as encoding/json does: what a proxy or
// an audit reads of such a body (often the first) is not what Herald would act on. The same
// name in two objects is two attributes.
func TestDuplicateKeysAreRefused(t *testing.T) {
	e, _, p := newProjectEnv(t)
	cfg := e.Owner.do("GET", "/groups/"+p+"/alertConfigs", nil).wantStatus(200).results()[0]
	path := "/groups/" + p + "/alertConfigs/" + cfg["id"].(string)
	if cfg["enabled"] != true {
		t.Fatalf("a default configuration is enabled: %v", cfg)
	}
	for _, body := range []string{`{"enabled":true,"enabled":false}`, `{"enabled":true,"Enabled":false}`} {
		r := e.Owner.do("PATCH", path, body).wantError(400, "INVALID_JSON")
		if params, _ := r.Body["parameters"].([]any); len(params) != 1 || !strings.EqualFold(params[0].(string), "enabled") {
			t.Errorf("%s: the error names the attribute: %s", body, r.Raw)
		}
		if got := e.Owner.do("GET", path, nil).wantStatus(200); got.Body["enabled"] != true {
			t.Fatalf("%s changed the configuration: %s", body, got.Raw)
		}
	}
	e.Owner.do("POST", "/orgs", `{"name":"a","name":"b"}`).wantError(400, "INVALID_JSON")
	e.Owner.do("POST", "/groups/"+p+"/maintenanceWindows", `{"alertTypeNames":["HOST"],"startDate":"2026-01-01T00:00:00Z",`+
		`"endDate":"2099-01-01T00:00:00Z","endDate":"2099-01-02T00:00:00Z"}`).wantError(400, "INVALID_JSON")
	// The same name in sibling and nested objects is not a duplicate.
	e.Owner.do("POST", "/groups/"+p+"/alertConfigs", `{"eventTypeName":"HOST_DOWN","enabled":true,"notifications":[`+
		`{"typeName":"GROUP","intervalMin":5,"delayMin":0,"emailEnabled":true},`+
		`{"typeName":"GROUP","intervalMin":10,"delayMin":0,"emailEnabled":true}]}`).wantStatus(201)
}
