//go:build linux

package faults

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/internal/apiclient"
)

// client calls the API process with digest authentication, one request at a time (a digest
// client's requests must reach the API in the order of their nonce counts): each agent has
// its own.
type client struct{ api *apiclient.Client }

func (c *cluster) client() *client {
	return &client{apiclient.New("http://"+c.apiAddr+api.BasePath, bootstrapPublic, bootstrapPrivate, 30*time.Second)}
}

// do sends body as JSON, checks the answer's status and decodes it into out (when not nil);
// another status is an *apiclient.StatusError.
func (a *client) do(method, path string, body any, want int, out any) error {
	return a.api.Do(context.Background(), method, path, body, want, out)
}

// call is do for setup: an error fails the test.
func (a *client) call(t *testing.T, method, path string, body any, want int, out any) {
	t.Helper()
	if err := a.do(method, path, body, want, out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

// notification is one notification of a configuration, as the API takes it.
type notification map[string]any

func webhookTo(url string, delayMin, intervalMin int) notification {
	return notification{"typeName": "WEBHOOK", "webhookUrl": url, "delayMin": delayMin, "intervalMin": intervalMin}
}

// groupByEmail reaches every member of the project by email.
func groupByEmail(delayMin, intervalMin int) notification {
	return notification{"typeName": "GROUP", "emailEnabled": true, "delayMin": delayMin, "intervalMin": intervalMin}
}

// project creates a project whose only enabled configuration is HOST_DOWN with notifications,
// and returns its id.
func (a *client) project(t *testing.T, name string, notifications ...notification) string {
	t.Helper()
	id, err := a.api.ProjectWithOnly(context.Background(), name, map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": notifications})
	if err != nil {
		t.Fatalf("project %s: %v", name, err)
	}
	return id
}

// member creates a user invited to project (a member, for GROUP notifications) and returns
// its id and email address.
func (a *client) member(t *testing.T, project, username string) (id, email string) {
	t.Helper()
	email = username + "@faults.example.com"
	var u struct{ ID string }
	a.call(t, "POST", "/users", map[string]any{"username": username, "password": "faults-password-1",
		"emailAddress": email, "firstName": "Fault", "lastName": username,
		"roles": []map[string]string{{"groupId": project, "roleName": "GROUP_READ_ONLY"}}}, http.StatusCreated, &u)
	return u.ID, email
}

// agent reports a project's hosts as a monitoring agent does, retrying a request the API did
// not accept (Redis down, say) until it is accepted; it records when each host's report was
// accepted, since only what the API accepted is promised.
type agent struct {
	api     *client
	project string

	mu       sync.Mutex
	refusals map[int]int // answers other than 202 while retrying, by status
	noRetry  int         // refusals (5xx) that did not say when to retry (Retry-After)
}

func (c *cluster) agent(project string) *agent {
	return &agent{api: c.client(), project: project, refusals: map[int]int{}}
}

// report posts that hosts are down (active) or up again, in one request, until the API accepts
// it (at most within), and returns when it did.
func (g *agent) report(hosts []string, active bool, within time.Duration) (time.Time, error) {
	obs := make([]map[string]any, len(hosts))
	for i, h := range hosts {
		obs[i] = map[string]any{"eventTypeName": "HOST_DOWN", "active": active, "hostId": h, "hostnameAndPort": h + ":27017"}
	}
	deadline := time.Now().Add(within)
	for {
		err := g.api.do("POST", "/groups/"+g.project+"/observations", obs, http.StatusAccepted, nil)
		if err == nil {
			return time.Now(), nil
		}
		g.mu.Lock()
		if e, ok := err.(*apiclient.StatusError); ok {
			g.refusals[e.Status]++
			if e.Status >= 500 && e.RetryAfter == "" {
				g.noRetry++
			}
		} else {
			g.refusals[0]++ // no answer at all
		}
		g.mu.Unlock()
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("observations of %d hosts not accepted within %s: %w", len(hosts), within, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// hostNames are n host ids of a project: prefix0, prefix1, ...
func hostNames(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}
