package api

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"runtime/debug"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
)

// Refusals of requests a browser could be tricked into sending, checked before authentication
// (a browser replays cached Digest credentials on another site's behalf).
const (
	// CodeCrossOriginRequest is the 403 of an unsafe request another site's page sent.
	CodeCrossOriginRequest = "CROSS_ORIGIN_REQUEST"
)

// crossOrigin refuses state-changing requests a browser marks as sent by another origin
// (Sec-Fetch-Site, or an Origin that is not the request's host); GET, HEAD and OPTIONS pass,
// as do clients that are not browsers (they send neither header).
var crossOrigin = http.NewCrossOriginProtection()

// browserGuard answers a request the API refuses before authenticating it: 403 for a cross-site
// browser request, 415 UNSUPPORTED_MEDIA_TYPE for a body that is not declared JSON (an HTML
// form can post text/plain to any site, JSON only through fetch, which CORS guards). It
// reports whether it answered.
func (s *Server) browserGuard(w http.ResponseWriter, r *http.Request, api bool) bool {
	if err := crossOrigin.Check(r); err != nil {
		s.writeProblem(w, r, http.StatusForbidden, &herald.Error{Code: CodeCrossOriginRequest,
			Detail: "Requests from another site's pages are refused.", Parameters: []any{}})
		return true
	}
	if api && hasBody(r) && !isJSON(r.Header.Get("Content-Type")) {
		s.writeProblem(w, r, http.StatusUnsupportedMediaType, &herald.Error{Code: herald.CodeUnsupportedMediaType,
			Detail: "The request body must be sent as Content-Type: application/json.", Parameters: []any{r.Header.Get("Content-Type")}})
		return true
	}
	return false
}

// hasBody: the request carries a body (a length, or a chunked one of unknown length).
func hasBody(r *http.Request) bool { return r.ContentLength != 0 }

// isJSON accepts application/json with any parameters (charset=utf-8).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// monitoringHeaders keep the console out of other sites' frames (clickjacking its buttons).
func monitoringHeaders(h http.Header) {
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
}

// connectionHeader is the document's Connection header on every HTTP/1 response (HTTP/2 has
// none): close when the client asked for it, keep-alive otherwise.
func connectionHeader(h http.Header, r *http.Request) {
	if r.ProtoMajor != 1 {
		return
	}
	if r.Close {
		h.Set("Connection", "close")
		return
	}
	h["Connection"] = keepAlive
}

// keepAlive and jsonType are header values nearly every response carries, made once: each of
// length and capacity 1, as fixedHeaders' values are.
var keepAlive, jsonType = []string{"keep-alive"}, []string{"application/json"}

// noStore is the Cache-Control of an answer that shows a secret.
var noStore = []string{"no-store"}

// recoverPanic turns a handler's panic into a 500 with the error body (when nothing was
// written yet) and a log line with the stack; the client sees neither the value nor the stack.
// http.ErrAbortHandler keeps its meaning: the connection is dropped.
func (s *Server) recoverPanic(w *statusRecorder, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		panic(v)
	}
	s.log.Error("panic serving request", zap.String("method", r.Method), zap.String("path", loggedPath(r)),
		zap.String("panic", fmt.Sprint(v)), zap.ByteString("stack", debug.Stack()))
	if w.status != 0 {
		panic(http.ErrAbortHandler) // the answer was begun: only dropping the connection tells the client
	}
	s.writeError(w, r, errors.New("panic"))
}
