// Package apiclient is the JSON-over-Digest client that Herald's own tests, fault suite and
// benchmarks use to drive a running API: one request at a time per client, since a digest
// client's requests must reach the API in the order of their nonce counts. It owns nothing of
// the API's behaviour and must not be used by the service itself.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/heraldhq/herald/api/digest"
)

// Client calls one API base URL (scheme, host and the API's base path) as one API key.
type Client struct {
	Base string
	HTTP *http.Client
}

// New is a client of base authenticating with the key publicKey:privateKey, each request
// bounded by timeout.
func New(base, publicKey, privateKey string, timeout time.Duration) *Client {
	return &Client{Base: base, HTTP: &http.Client{Transport: &digest.Transport{Username: publicKey, Password: privateKey}, Timeout: timeout}}
}

// StatusError is an answer other than the one wanted.
type StatusError struct {
	Method, Path string
	Status       int
	RetryAfter   string
	Body         string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d: %s", e.Method, e.Path, e.Status, e.Body)
}

// Do sends body as JSON (none when nil), checks that the answer has status want, and decodes
// it into out (when not nil). An answer of another status is a *StatusError.
func (c *Client) Do(ctx context.Context, method, path string, body any, want int, out any) error {
	raw, err := c.send(ctx, method, path, body, want)
	if err != nil || out == nil {
		return err
	}
	return json.Unmarshal(raw, out)
}

// T is what Must needs of a test; a *testing.T has it.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Must is Do for a test: t fails when the call does or the status is not want. The answer is
// returned decoded when it is a JSON object, nil when it is not.
func (c *Client) Must(t T, method, path string, body any, want int) map[string]any {
	t.Helper()
	raw, err := c.send(context.Background(), method, path, body, want)
	var se *StatusError
	if errors.As(err, &se) {
		t.Fatalf("%s %s: %d, want %d: %s", method, path, se.Status, want, se.Body)
	} else if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// send sends body as JSON (none when nil) and returns the answer's body, or a *StatusError
// when its status is not want.
func (c *Client) send(ctx context.Context, method, path string, body any, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, &StatusError{Method: method, Path: path, Status: resp.StatusCode, RetryAfter: resp.Header.Get("Retry-After"), Body: string(raw)}
	}
	return raw, nil
}

// ProjectWithOnly creates an organization and a project, both called name, turns off the
// alert configurations every new project gets, and adds config (an alert configuration's
// request body) as the project's only enabled one. It returns the project's id.
func (c *Client) ProjectWithOnly(ctx context.Context, name string, config map[string]any) (string, error) {
	var org, project struct{ ID string }
	var defaults struct{ Results []struct{ ID string } }
	if err := c.Do(ctx, "POST", "/orgs", map[string]any{"name": name}, http.StatusCreated, &org); err != nil {
		return "", err
	}
	if err := c.Do(ctx, "POST", "/groups", map[string]any{"name": name, "orgId": org.ID}, http.StatusCreated, &project); err != nil {
		return "", err
	}
	configs := "/groups/" + project.ID + "/alertConfigs"
	if err := c.Do(ctx, "GET", configs+"?itemsPerPage=500", nil, http.StatusOK, &defaults); err != nil {
		return "", err
	}
	for _, d := range defaults.Results {
		if err := c.Do(ctx, "PATCH", configs+"/"+d.ID, map[string]any{"enabled": false}, http.StatusOK, nil); err != nil {
			return "", err
		}
	}
	return project.ID, c.Do(ctx, "POST", configs, config, http.StatusCreated, nil)
}
