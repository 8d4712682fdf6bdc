package herald

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The docs list every errorCode the API can answer and every audit event it records: the
// constants in the code are the facts, and the docs must not fall behind them.
func TestDocsListEveryErrorCodeAndEvent(t *testing.T) {
	for _, c := range []struct{ source, prefix, doc string }{
		{"error.go", "Code", "docs/api.md"},
		{"event.go", "Event", "docs/decisions.md"},
		{"recipients.go", "EventCredential", "docs/decisions.md"},
	} {
		doc, err := os.ReadFile(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		values := stringConstants(t, c.source, c.prefix)
		if len(values) == 0 {
			t.Fatalf("%s has no %s* constants", c.source, c.prefix)
		}
		for name, v := range values {
			if !strings.Contains(string(doc), "`"+v+"`") {
				t.Errorf("%s does not list %s (%s, %s)", c.doc, v, name, c.source)
			}
		}
	}
}

// stringConstants returns the string constants of a file of this package whose names start
// with prefix.
func stringConstants(t *testing.T, file, prefix string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						out[name.Name] = v
					}
				}
			}
		}
	}
	return out
}
