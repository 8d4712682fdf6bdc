package api

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// The OpenAPI document and the route table agree both ways: every route the server serves is
// documented with its method, and every documented path and method is served.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	served := map[string]bool{}
	for _, rt := range (&Server{}).routes() {
		served[rt.pattern] = true
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	for _, p := range slices.Sorted(maps.Keys(served)) {
		if !documented[p] {
			t.Errorf("route %q is served but not in api/openapi.json", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(documented)) {
		if !served[p] {
			t.Errorf("api/openapi.json documents %q, which no route serves", p)
		}
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != BasePath {
		t.Errorf("the document's server is %v, want the one base path %s", doc.Servers, BasePath)
	}
}

// The document is valid OpenAPI 3 as kin-openapi's validator reads it: every $ref resolves,
// every path parameter is declared, every schema is well formed.
func TestOpenAPIIsValid(t *testing.T) {
	doc := loadOpenAPI(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("api/openapi.json is not valid OpenAPI 3: %v", err)
	}
	// Every operation says which roles may call it, with an access rule the code has.
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if !strings.HasPrefix(op.Description, "Roles: ") || op.Extensions["x-herald-access"] == nil {
				t.Errorf("%s %s does not say which roles may call it", method, path)
			}
		}
	}
}

func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPI)
	if err != nil {
		t.Fatalf("api/openapi.json does not load: %v", err)
	}
	return doc
}

// The prose reference names every route the server serves, as `METHOD /path`.
func TestDocsNameEveryRoute(t *testing.T) {
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range (&Server{}).routes() {
		if !strings.Contains(string(doc), "`"+rt.pattern+"`") {
			t.Errorf("docs/api.md does not name the route `%s`", rt.pattern)
		}
	}
}
