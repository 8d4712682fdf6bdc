package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// herald admin sets up a deployment: an organization, a project with its default
// configurations, and an organization key whose private key it prints once.
func TestAdminSetsUpADeployment(t *testing.T) {
	rdb := storetest.Redis(t)
	t.Setenv("HERALD_REDIS_URL", storetest.URL(rdb))
	st := store.New(rdb)
	ctx := context.Background()
	admin := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run(ctx, append([]string{"admin"}, args...), &out, &errOut); err != nil {
			t.Fatalf("herald admin %v: %v\n%s", args, err, errOut.String())
		}
		return strings.TrimSpace(out.String())
	}
	org := admin("create-org", "--name", "Acme")
	if _, err := st.Org(ctx, org); err != nil {
		t.Fatalf("create-org printed %q: %v", org, err)
	}
	p := admin("create-project", "--org", org, "--name", "prod", "--tags", "prod, eu")
	project, err := st.Project(ctx, p)
	if err != nil || project.OrgID != org || len(project.Tags) != 2 {
		t.Fatalf("create-project printed %q: %+v %v", p, project, err)
	}
	if _, n, _ := st.AlertConfigs(ctx, p, store.Page{Limit: 100}); n == 0 {
		t.Error("the project has no default alert configurations")
	}
	out := admin("create-key", "--org", org, "--role", "ORG_OWNER", "--desc", "ops")
	m := regexp.MustCompile(`public key:\s+(\S+)\nprivate key:\s+(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("create-key printed %q", out)
	}
	k, ok, err := st.APIKeyByPublicKey(ctx, m[1])
	if err != nil || !ok || k.OrgID != org || k.HA1 != digest.HA1(m[1], m[2]) || k.Roles[0].RoleName != "ORG_OWNER" {
		t.Fatalf("the key printed is not the key stored: %+v %v", k, err)
	}
	var errOut bytes.Buffer
	if err := run(ctx, []string{"admin", "create-key", "--role", "ORG_OWNER"}, &bytes.Buffer{}, &errOut); err == nil {
		t.Error("a global key with an organization role was created")
	}
}
