package api

import (
	"embed"
	"net/http"
)

// OpenAPIPath is where the OpenAPI 3 document of the API is served, without authentication:
// it describes the API and holds no secret, and a client generator or viewer must read it
// before it has a key.
const OpenAPIPath = BasePath + "/openapi.json"

// DocsPath is where a viewer of that document (Redoc's standalone bundle, embedded) is
// served, also without authentication.
const DocsPath = "/api/docs"

// openAPI is the OpenAPI 3 document: every route of routes() with its method, parameters,
// bodies, answers and the roles it takes (a test checks it against the route table both ways
// and validates it). The prose reference is docs/api.md.
//
//go:embed openapi.json
var openAPI []byte

// docsFiles is the viewer: a page, its style sheet and Redoc's standalone bundle from its npm package
// (redoc@2.5.4, bundles/redoc.standalone.js, MIT: api/docs/redoc.LICENSE), so the page works on
// a machine with no internet access.
//
//go:embed docs/index.html docs/page.css docs/redoc.standalone.js
var docsFiles embed.FS

// docsPolicy lets the viewer load only from this server. styled-components (inside Redoc)
// writes its CSS into <style> elements, hence 'unsafe-inline' for styles only; Redoc's search
// runs in a worker it starts from a blob: URL.
const docsPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src 'self' blob:; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// publicDoc is one file served at a public documentation path.
type publicDoc struct {
	body        []byte
	contentType string
}

// publicDocs is every public documentation path and what it serves.
var publicDocs = map[string]publicDoc{
	OpenAPIPath:                       {openAPI, "application/json"},
	DocsPath:                          {mustRead("docs/index.html"), "text/html; charset=utf-8"},
	DocsPath + "/":                    {mustRead("docs/index.html"), "text/html; charset=utf-8"},
	DocsPath + "/page.css":            {mustRead("docs/page.css"), "text/css; charset=utf-8"},
	DocsPath + "/redoc.standalone.js": {mustRead("docs/redoc.standalone.js"), "text/javascript; charset=utf-8"},
}

// serveDoc answers a path of publicDocs, with no authentication and a policy that keeps
// the page on this server.
func (s *Server) serveDoc(w http.ResponseWriter, r *http.Request, d publicDoc) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.methodNotAllowed(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", d.contentType)
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(d.body)
	}
}

// mustRead reads an embedded file; the names are the constants of publicDocs, so a failure
// is a build mistake that the tests catch.
func mustRead(name string) []byte {
	b, err := docsFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}
