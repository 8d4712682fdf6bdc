package api_test

import "testing"

func TestSmoke(t *testing.T) {
	e := newEnv(t)
	org := e.org("acme")
	p := e.project(org, "prod")
	r := e.Owner.do("GET", "/groups/"+p+"/alertConfigs?itemsPerPage=3", nil).wantStatus(200)
	t.Logf("%s", r.Raw)
}
