package herald

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
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

// Every citation of the docs resolves: the code's comments and the Markdown cite
// docs/FILE.md#anchor (or FILE.md#anchor inside docs/), and each file and anchor exists, an
// anchor being a heading's GitHub slug or an explicit <a id="...">.
func TestDocsCitationsResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, path := range docs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for line := range strings.Lines(string(b)) {
			if h, ok := strings.CutPrefix(line, "#"); ok {
				set[slug(strings.TrimLeft(h, "#"))] = true
			}
			for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
				set[m[1]] = true
			}
		}
		anchors[filepath.Base(path)] = set
	}
	cited := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir // .git, .ci
		case d.IsDir() || !strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, ".md"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inDocs := filepath.Dir(path) == "docs"
		for _, m := range citation.FindAllStringSubmatch(string(b), -1) {
			file, anchor := m[2]+".md", strings.TrimPrefix(m[3], "#")
			if m[1] == "" && !inDocs {
				continue // FILE.md without docs/ outside docs/ is another file
			}
			cited++
			set, ok := anchors[file]
			if !ok {
				t.Errorf("%s cites docs/%s, which does not exist", path, file)
			} else if anchor != "" && !set[anchor] {
				t.Errorf("%s cites docs/%s#%s, which has no such heading or anchor", path, file, anchor)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited < 30 {
		t.Errorf("found %d citations of the docs, want the code's (at least 30)", cited)
	}
}

var (
	citation       = regexp.MustCompile(`(docs/)?\b(api|lifecycle|decisions)\.md(#[a-z0-9-]+)?`)
	explicitAnchor = regexp.MustCompile(`<a id="([a-z0-9-]+)">`)
)

// slug is GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
