package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// hostile is a structure-aware way to spoil a valid body: it rewrites the decoded value (or the
// encoded bytes) the way an attacker would.
type hostile struct {
	name  string
	spoil func(body []byte, n int) []byte
}

// invalidUTF8 stands for bytes that are not UTF-8 until after encoding (encoding/json would
// replace them).
const invalidUTF8 = "\x00INVALID\x00"

var hostiles = []hostile{
	{"huge arrays", func(b []byte, n int) []byte { return reencode(b, growArrays(n)) }},
	{"empty items", func(b []byte, n int) []byte { return reencode(b, emptyArrays(n)) }},
	{"deep nesting", func(b []byte, n int) []byte {
		return []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
	}},
	{"deep nesting in a field", func(b []byte, n int) []byte { return reencode(b, nestValues(n)) }},
	{"huge numbers", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(json.Number("1e999999"))) }},
	{"long integers", func(b []byte, _ int) []byte {
		return reencode(b, replaceScalars(json.Number("92233720368547758089223372036854775808")))
	}},
	{"negative overflow", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(json.Number("-1e309"))) }},
	{"wrong types", func(b []byte, _ int) []byte { return reencode(b, swapTypes) }},
	{"invalid UTF-8", func(b []byte, _ int) []byte {
		return bytes.ReplaceAll(reencode(b, replaceStrings(invalidUTF8)), []byte(invalidUTF8), []byte("\xff\xfe\xc0\xaf"))
	}},
	{"lone surrogates", func(b []byte, _ int) []byte {
		return bytes.ReplaceAll(reencode(b, replaceStrings(invalidUTF8)), []byte(invalidUTF8), []byte(`\ud800\udfff\ud800`))
	}},
	{"huge strings", func(b []byte, n int) []byte {
		return reencode(b, replaceStrings(strings.Repeat("x", min(64*n, 300<<10))))
	}},
	{"duplicate keys", func(b []byte, _ int) []byte { return bytes.Replace(b, []byte("{"), []byte(`{"a":1,"a":[],`), 1) }},
	{"nulls", func(b []byte, _ int) []byte { return reencode(b, replaceScalars(nil)) }},
	{"truncated", func(b []byte, _ int) []byte { return b[:len(b)/2] }},
}

// reencode decodes body, rewrites it with f, and encodes it again (body as it is when it does
// not decode).
func reencode(body []byte, f func(any) any) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	out, err := json.Marshal(f(v))
	if err != nil {
		return body
	}
	return out
}

// walk rewrites every value below v (children first) with f.
func walk(v any, f func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = walk(c, f)
		}
	case []any:
		for i, c := range x {
			x[i] = walk(c, f)
		}
	}
	return f(v)
}

// growArrays makes each outermost array n copies of its first item (an empty object when it
// has none); arrays inside stay as they are, so the body grows by n, not n to a power.
func growArrays(n int) func(any) any {
	var grow func(v any) any
	grow = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				x[k] = grow(c)
			}
		case []any:
			var item any = map[string]any{}
			if len(x) > 0 {
				item = x[0]
			}
			return slices.Repeat([]any{item}, n)
		}
		return v
	}
	return grow
}

func emptyArrays(n int) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			if _, ok := v.([]any); ok {
				return slices.Repeat([]any{map[string]any{}}, n)
			}
			return v
		})
	}
}

func nestValues(n int) func(any) any {
	return func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k := range m {
			var deep any = "x"
			for range n {
				deep = []any{deep}
			}
			m[k] = deep
			break
		}
		return m
	}
}

func replaceScalars(with any) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			switch v.(type) {
			case map[string]any, []any:
				return v
			}
			return with
		})
	}
}

func replaceStrings(with string) func(any) any {
	return func(v any) any {
		return walk(v, func(v any) any {
			if _, ok := v.(string); ok {
				return with
			}
			return v
		})
	}
}

// swapTypes gives every value another JSON type.
func swapTypes(v any) any {
	return walk(v, func(v any) any {
		switch x := v.(type) {
		case string:
			return json.Number("7")
		case json.Number:
			return string(x)
		case bool:
			return "true"
		case map[string]any:
			if len(x) > 0 {
				return x
			}
			return []any{}
		case []any:
			return map[string]any{"0": x}
		}
		return false
	})
}

// hostileBudget is the most one request may allocate: a small multiple of what it sends, and
// a fixed allowance for serving any request at all.
func hostileBudget(body []byte) uint64 { return 40*uint64(len(body)) + 16<<20 }

// checkHostileAnswer: never a 5xx, every 4xx with the error body, memory within budget.
func checkHostileAnswer(t *testing.T, what string, r *response, body []byte, alloc uint64) {
	t.Helper()
	switch {
	case r.Status >= 500:
		t.Errorf("%s: %d: %s", what, r.Status, r.Raw)
	case r.Status >= 400:
		if r.num("error") != float64(r.Status) || r.str("errorCode") == "" || r.str("detail") == "" || r.Body["parameters"] == nil {
			t.Errorf("%s: %d without the error body: %.200s", what, r.Status, r.Raw)
		}
	}
	if alloc > hostileBudget(body) {
		t.Errorf("%s: a %d-byte body allocated %d bytes (budget %d)", what, len(body), alloc, hostileBudget(body))
	}
}

// TestHostileBodies spoils a valid body of every write route in every hostile way, as the
// global owner (who gets furthest): no 5xx, no panic, the error body on every refusal, and
// memory bounded by the body's size.
func TestHostileBodies(t *testing.T) {
	e := newEnv(t)
	paths := fuzzPaths(t, e)
	for i, ep := range writeEndpoints {
		for _, h := range hostiles {
			for _, n := range []int{3, 20_000} {
				body := h.spoil([]byte(ep.seeds[0]), n)
				var r *response
				alloc := allocated(func() {
					r = e.Owner.send(ep.method, paths[i], body, http.Header{"Content-Type": {"application/json"}})
				})
				checkHostileAnswer(t, fmt.Sprintf("%s %s, %s ×%d", ep.method, ep.path, h.name, n), r, body, alloc)
			}
		}
	}
}

// FuzzHostileBodies is TestHostileBodies driven by the fuzzer: any endpoint, any hostile way,
// any size, from any base body (the seeds are each endpoint's valid bodies). Its seeds run
// in go test.
func FuzzHostileBodies(f *testing.F) {
	for i, ep := range writeEndpoints {
		for j := range hostiles {
			f.Add(uint8(i), uint8(j), uint16(1000), []byte(ep.seeds[0]))
		}
	}
	e := newEnvTB(f)
	var paths []string
	f.Fuzz(func(t *testing.T, endpoint, way uint8, n uint16, base []byte) {
		e.t, e.Owner.t = t, t
		if paths == nil {
			paths = fuzzPaths(t, e)
		}
		i, h := int(endpoint)%len(writeEndpoints), hostiles[int(way)%len(hostiles)]
		body := h.spoil(base, int(n)%20_000+1)
		var r *response
		alloc := allocated(func() {
			r = e.Owner.send(writeEndpoints[i].method, paths[i], body, http.Header{"Content-Type": {"application/json"}})
		})
		checkHostileAnswer(t, fmt.Sprintf("%s %s, %s", writeEndpoints[i].method, writeEndpoints[i].path, h.name), r, body, alloc)
	})
}
