package api

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
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
	for _, p := range append(slices.Clone(actRoutes), pingRoutes...) {
		served[p] = true
	}
	for _, h := range (&Server{}).hooks() {
		served[h.pattern] = true
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
	patterns := append(slices.Clone(actRoutes), pingRoutes...)
	for _, h := range (&Server{}).hooks() {
		patterns = append(patterns, h.pattern)
	}
	for _, rt := range (&Server{}).routes() {
		patterns = append(patterns, rt.pattern)
	}
	for _, p := range patterns {
		if !strings.Contains(string(doc), "`"+p+"`") {
			t.Errorf("docs/api.md does not name the route `%s`", p)
		}
	}
}

// Each operation's x-herald-access names the access rule its handler checks (in the handler
// or in a function it calls): the roles the document shows are the roles the code asks for.
func TestOpenAPIRolesAreTheHandlers(t *testing.T) {
	doc := loadOpenAPI(t)
	uses := accessUses(t)
	for _, rt := range (&Server{}).routes() {
		method, path, _ := strings.Cut(rt.pattern, " ")
		op := doc.Paths.Find(path).GetOperation(method)
		if op == nil {
			continue // TestOpenAPIDocumentsEveryRoute reports it
		}
		name := runtime.FuncForPC(reflect.ValueOf(rt.handle).Pointer()).Name()
		name = strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "-fm")
		access, _ := op.Extensions["x-herald-access"].(string)
		if checked := uses(name); !checked[access] {
			t.Errorf("%s: the document says access %q, the handler %s checks %v", rt.pattern, access, name, slices.Sorted(maps.Keys(checked)))
		}
	}
}

// accessUses reads the package's source and returns, for a function name, the herald.Access
// rules (herald.ReadProject, ...) it names itself or through the functions it calls.
func accessUses(t *testing.T) func(string) map[string]bool {
	t.Helper()
	rules := map[string]bool{"ReadProject": true, "WriteMonitoring": true, "AssignAPIKey": true, "ReadOrg": true,
		"OwnOrg": true, "ReadGlobal": true, "MonitorGlobal": true, "AdminUsers": true, "OwnGlobal": true}
	pkgs, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct, calls := map[string]map[string]bool{}, map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range pkgs {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if direct[name] == nil {
				direct[name] = map[string]bool{}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && x.Name == "herald" && rules[n.Sel.Name] {
						direct[name][n.Sel.Name] = true
					}
				case *ast.CallExpr:
					switch f := n.Fun.(type) {
					case *ast.Ident:
						calls[name] = append(calls[name], f.Name)
					case *ast.SelectorExpr:
						calls[name] = append(calls[name], f.Sel.Name)
					}
				}
				return true
			})
		}
	}
	return func(name string) map[string]bool {
		out, seen := map[string]bool{}, map[string]bool{}
		var walk func(string)
		walk = func(n string) {
			if seen[n] {
				return
			}
			seen[n] = true
			maps.Copy(out, direct[n])
			for _, c := range calls[n] {
				walk(c)
			}
		}
		walk(name)
		return out
	}
}
