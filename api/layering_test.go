package api_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The API knows no sender: none of its files imports package channels or one of its kinds.
// The rules it shares with the senders (which addresses a worker refuses) live in a package
// of their own, internal/netguard.
func TestAPIImportsNoSender(t *testing.T) {
	const channels = "github.com/heraldhq/herald/channels"
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); path == channels || strings.HasPrefix(path, channels+"/") {
				t.Errorf("%s imports %s", f, path)
			}
		}
	}
}
