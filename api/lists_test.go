package api_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
)

// listIDs reads every page of list path as c, itemsPerPage at a time, and returns the ids in
// order; each page's totalCount must be the number of ids, and each item's self link its own.
func listIDs(t *testing.T, c *client, path string, itemsPerPage int) []string {
	t.Helper()
	var ids []string
	for page := 1; page < 100; page++ {
		r := c.do("GET", fmt.Sprintf("%s?itemsPerPage=%d&pageNum=%d", path, itemsPerPage, page), nil).wantStatus(200)
		wantKeys(t, r.Body, "results", "links", "totalCount")
		for _, it := range r.results() {
			id, _ := it["id"].(string)
			if self := link(it["links"], "self"); !strings.HasSuffix(self, path+"/"+id) {
				t.Errorf("%s: item %s has self link %q", path, id, self)
			}
			ids = append(ids, id)
		}
		if link(r.Body["links"], "next") == "" {
			if int(r.num("totalCount")) != len(ids) {
				t.Errorf("%s: totalCount %v, %d items over the pages", path, r.Body["totalCount"], len(ids))
			}
			return ids
		}
	}
	t.Fatalf("%s: pages without end", path)
	return nil
}

// GET /orgs and GET /groups list exactly what the caller may read, oldest first: all of it for
// a global role; an organization (and, for its owner or reader, its projects) for an
// organization role; a project for a project role, without its organization; nothing, with
// 200 and an empty list, for a caller without a role (a user's organization and project roles
// are invitations: no role yet). Keys and users alike, paged one item at
// a time and a whole page at once.
func TestListsShowOnlyWhatTheCallerMayRead(t *testing.T) {
	e := newEnv(t)
	orgA, orgB := e.org("a"), e.org("b")
	a1, b1, a2, b2 := e.project(orgA, "a1"), e.project(orgB, "b1"), e.project(orgA, "a2"), e.project(orgB, "b2")
	e.Owner.do("POST", "/users", userBody("gil", role(herald.GlobalReadOnly))).wantStatus(201)
	e.Owner.do("POST", "/users", userBody("nobody")).wantStatus(201)
	// A user's organization and project roles are invitations, which give no access.
	e.Owner.do("POST", "/users", userBody("ann", role(herald.OrgOwner, "orgId", orgA), role(herald.GroupReadOnly, "groupId", b2))).wantStatus(201)
	callers := []struct {
		name         string
		c            *client
		orgs, groups []string
	}{
		{"global owner", e.Owner, []string{orgA, orgB}, []string{a1, b1, a2, b2}},
		{"global read-only", e.key("", herald.Role{RoleName: herald.GlobalReadOnly}), []string{orgA, orgB}, []string{a1, b1, a2, b2}},
		{"owner of a", e.key(orgA, herald.Role{OrgID: orgA, RoleName: herald.OrgOwner}), []string{orgA}, []string{a1, a2}},
		{"global read-only user", userClient(t, e, "gil", testPassword), []string{orgA, orgB}, []string{a1, b1, a2, b2}},
		{"reader of a", e.key(orgA, herald.Role{OrgID: orgA, RoleName: herald.OrgReadOnly}), []string{orgA}, []string{a1, a2}},
		{"member of a", e.key(orgA, herald.Role{OrgID: orgA, RoleName: "ORG_MEMBER"}), []string{orgA}, nil},
		{"project b1 only", e.key(orgB, herald.Role{GroupID: b1, RoleName: herald.GroupReadOnly}), nil, []string{b1}},
		{"user invited to a and b2", userClient(t, e, "ann", testPassword), nil, nil},
		{"reader of a, owner of b2", e.key(orgA, herald.Role{OrgID: orgA, RoleName: herald.OrgReadOnly},
			herald.Role{GroupID: b2, OrgID: orgB, RoleName: herald.GroupOwner}, herald.Role{GroupID: a1, OrgID: orgA, RoleName: herald.GroupOwner}),
			[]string{orgA}, []string{a1, a2, b2}},
		{"key without a role", e.key(orgA), nil, nil},
		{"user without a role", userClient(t, e, "nobody", testPassword), nil, nil},
	}
	for _, who := range callers {
		t.Run(who.name, func(t *testing.T) {
			c := who.c.boundTo(t)
			for _, size := range []int{1, 500} {
				if got := listIDs(t, c, "/orgs", size); !slices.Equal(got, who.orgs) {
					t.Errorf("GET /orgs by %d: %v, want %v", size, got, who.orgs)
				}
				if got := listIDs(t, c, "/groups", size); !slices.Equal(got, who.groups) {
					t.Errorf("GET /groups by %d: %v, want %v", size, got, who.groups)
				}
			}
			// Every listed item is one the caller may read at its own path.
			for _, id := range who.orgs {
				c.do("GET", "/orgs/"+id, nil).wantStatus(200)
			}
			for _, id := range who.groups {
				c.do("GET", "/groups/"+id, nil).wantStatus(200)
			}
		})
	}
}

// The lists keep the API's list conventions: links that page through, envelope and pretty,
// and the documented 400 for a page parameter out of range, which changes nothing.
func TestListsPageAndRefuseBadPages(t *testing.T) {
	e := newEnv(t)
	org := e.org("a")
	var projects []string
	for i := range 3 {
		projects = append(projects, e.project(org, fmt.Sprint("p", i)))
	}
	orgOwner := e.key(org, herald.Role{OrgID: org, RoleName: herald.OrgOwner})
	for _, c := range []*client{e.Owner, orgOwner} {
		r := c.do("GET", "/groups?itemsPerPage=2&pageNum=2&envelope=true&pretty=true", nil).wantStatus(200)
		if r.num("status") != 200 || r.num("totalCount") != 3 || len(r.results()) != 1 || r.results()[0]["id"] != projects[2] {
			t.Errorf("page 2 of 2 with envelope: %s", r.Raw)
		}
		if !strings.Contains(string(r.Raw), "\n  ") {
			t.Errorf("pretty=true is not indented: %s", r.Raw)
		}
		prev, _ := url.Parse(link(r.Body["links"], "previous"))
		if prev == nil || prev.Query().Get("pageNum") != "1" || link(r.Body["links"], "next") != "" {
			t.Errorf("links of the last page: %v", r.Body["links"])
		}
		past := c.do("GET", "/groups?itemsPerPage=500&pageNum=2147483647", nil).wantStatus(200)
		if len(past.results()) != 0 || past.num("totalCount") != 3 || !strings.Contains(string(past.Raw), `"results":[]`) {
			t.Errorf("a page far past the end: %s", past.Raw)
		}
		for _, path := range []string{"/orgs", "/groups"} {
			for _, q := range []string{"itemsPerPage=0", "itemsPerPage=-1", "itemsPerPage=501", "itemsPerPage=99999999999999999999",
				"pageNum=0", "pageNum=-1", "pageNum=2147483648", "pageNum=1e3", "itemsPerPage=ten"} {
				c.do("GET", path+"?"+q, nil).wantError(400, herald.CodeInvalidQueryParameter)
			}
		}
	}
	if got := listIDs(t, e.Owner, "/groups", 2); !slices.Equal(got, projects) {
		t.Errorf("after the refused requests: %v, want %v", got, projects)
	}
}
