package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/heraldhq/herald"
)

// allocated is the bytes the whole process allocated while f ran (the server is in-process).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// repeatArray is a JSON array of n copies of item.
func repeatArray(item string, n int) []byte {
	var b bytes.Buffer
	b.Grow(n*(len(item)+1) + 2)
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// 9 MB of empty items (3 million) is refused at its first item, reading and allocating a small
// fraction of the body, where it used to decode all of it (about 2.5 GB) before the check.
func TestObservationsBodyOfEmptyItemsCostsLittle(t *testing.T) {
	e, _, p := newProjectEnv(t)
	body := repeatArray("{}", 3_000_000)
	var r *response
	n := allocated(func() { r = e.Owner.do("POST", "/groups/"+p+"/observations", body) })
	r.wantError(400, herald.CodeMissingAttribute)
	t.Logf("a %d-byte body of empty items allocated %d bytes (%.2f× its size)", len(body), n, float64(n)/float64(len(body)))
	if n > uint64(len(body)) {
		t.Errorf("allocated %d bytes for a %d-byte body; want at most its size", n, len(body))
	}
}

// Valid items past the cap are refused at item cap+1 with REQUEST_TOO_LARGE, with memory a
// small multiple of what was read.
func TestObservationsStopAtTheCap(t *testing.T) {
	e, _, p := newProjectEnv(t)
	item := `{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h"}`
	body := repeatArray(item, 150_000)
	var r *response
	n := allocated(func() { r = e.Owner.do("POST", "/groups/"+p+"/observations", body) })
	r.wantError(400, herald.CodeRequestTooLarge)
	read := (herald.MaxObservationsPerRequest + 1) * (len(item) + 1)
	t.Logf("a %d-byte body of valid items allocated %d bytes (%.1f× the %d bytes read up to the cap)", len(body), n, float64(n)/float64(read), read)
	if n > uint64(40*read) {
		t.Errorf("allocated %d bytes, more than 40× the %d bytes read", n, read)
	}
	if _, err := e.Store.Host(t.Context(), p, "h"); !herald.IsNotFound(err) {
		t.Errorf("a refused batch registered its host (%v)", err)
	}
}

// Every other endpoint reads at most 256 KiB, and arrays stop at their cap: notifications at
// herald.MaxNotificationsPerConfig, any other at herald.MaxArrayItems; nesting stops at
// herald.MaxNesting. Each is a 400 naming what was wrong.
func TestBodiesAndArraysAreBounded(t *testing.T) {
	e, _, p := newProjectEnv(t)
	big := `{"name":"` + strings.Repeat("x", 256<<10) + `"}`
	r := e.Owner.do("POST", "/orgs", big).wantError(400, herald.CodeRequestTooLarge)
	if fmt.Sprint(r.Body["parameters"]) != fmt.Sprint([]any{float64(256 << 10)}) {
		t.Errorf("parameters %v, want the limit", r.Body["parameters"])
	}
	notification := `{"typeName":"GROUP","intervalMin":60,"roles":["GROUP_OWNER"],"emailEnabled":true}`
	config := func(n int, item string) string {
		return `{"eventTypeName":"HOST_DOWN","enabled":true,"notifications":` + string(repeatArray(item, n)) + `}`
	}
	e.Owner.do("POST", "/groups/"+p+"/alertConfigs", config(herald.MaxNotificationsPerConfig, notification)).wantStatus(201)
	for _, body := range []string{config(herald.MaxNotificationsPerConfig+1, notification), config(80_000, "{}")} {
		r := e.Owner.do("POST", "/groups/"+p+"/alertConfigs", body).wantError(400, herald.CodeInvalidAttribute)
		if fmt.Sprint(r.Body["parameters"]) != "[notifications]" {
			t.Errorf("parameters %v, want [notifications]", r.Body["parameters"])
		}
	}
	roles := `{"desc":"ci","roles":` + string(repeatArray(`"GLOBAL_READ_ONLY"`, herald.MaxArrayItems+1)) + `}`
	e.Owner.do("POST", "/admin/apiKeys", roles).wantError(400, herald.CodeInvalidAttribute)
	deep := `{"name":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	e.Owner.do("POST", "/orgs", deep).wantError(400, herald.CodeInvalidJSON)
	e.Owner.do("POST", "/groups/"+p+"/observations", strings.Repeat("[", 10_000)).wantError(400, herald.CodeInvalidJSON)
	// An observations body over its own limit (sized for the item cap) is too large as well.
	huge := `[{"eventTypeName":"HOST_DOWN","active":true,"hostId":"h","hostnameAndPort":"` + strings.Repeat("x", 26<<20) + `"}]`
	e.Owner.send("POST", "/groups/"+p+"/observations", []byte(huge), http.Header{"Content-Type": {"application/json"}}).wantError(400, herald.CodeRequestTooLarge)
}
