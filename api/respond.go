package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// Link is a link object of a resource or list.
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// versionHeaders are on every response (the document's success headers; harmless on errors),
// with nosniff.
func (s *Server) versionHeaders(h http.Header) {
	for k, v := range s.fixedHeaders {
		h[k] = v
	}
}

// fixedHeaders are the values of versionHeaders, made once: every response carries them. Each
// value is a slice of length and capacity 1, so a handler adding to one (Header.Add) appends to
// a copy, never to the one all responses share.
func fixedHeaders(cfg Config) http.Header {
	h := http.Header{}
	h.Set("X-Vendor-Service-Version", "gitHash="+cfg.GitHash+"; versionString="+cfg.Version)
	h.Set("Strict-Transport-Security", "max-age=300")
	h.Set("Vary", "Accept-Encoding")
	h.Set("X-Content-Type-Options", "nosniff") // a body is what its Content-Type says, never a page
	for k, v := range h {
		h[k] = v[:1:1]
	}
	return h
}

// writeJSON writes v with status, pretty-printed when the query asks for it.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any, contentType string) {
	b, err := marshal(v)
	if err != nil {
		s.log.Error("encode response", zap.Error(err))
		status, b = http.StatusInternalServerError, []byte(`{"detail":"Unexpected error.","error":500,"errorCode":"UNEXPECTED_ERROR","parameters":[],"reason":"Internal Server Error"}`)
	}
	s.writeEncoded(w, r, status, b, contentType)
}

// writeEncoded answers b, JSON as marshal encodes it, with status (indented under pretty=true).
func (s *Server) writeEncoded(w http.ResponseWriter, r *http.Request, status int, b []byte, contentType string) {
	if queryBool(r, "pretty") {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			b = buf.Bytes()
		}
	}
	h := w.Header()
	if contentType == jsonType[0] {
		h["Content-Type"] = jsonType
	} else {
		h.Set("Content-Type", contentType)
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errorBody is the error body of docs/api.md#errors.
type errorBody struct {
	Detail     string `json:"detail"`
	Error      int    `json:"error"`
	ErrorCode  string `json:"errorCode"`
	Parameters []any  `json:"parameters"`
	Reason     string `json:"reason"`
}

var statusOfKind = map[herald.ErrorKind]int{
	herald.KindInvalid:      http.StatusBadRequest,
	herald.KindUnauthorized: http.StatusUnauthorized,
	herald.KindNotFound:     http.StatusNotFound,
	herald.KindConflict:     http.StatusConflict,
	herald.KindRateLimited:  http.StatusTooManyRequests,
	herald.KindInternal:     http.StatusInternalServerError,
	herald.KindUnavailable:  http.StatusServiceUnavailable,
}

// unavailableRetryAfter is the Retry-After of a 503 while Redis cannot be reached: agents back
// off rather than fail.
const unavailableRetryAfter = "5"

// writeError answers with err: a domain error as its kind says, Redis unreachable as a 503
// with Retry-After, anything else as a 500 whose body says nothing of the cause (which goes to
// the log).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *herald.Error
	switch {
	case errors.As(err, &e):
	case store.Unavailable(err):
		s.log.Warn("store unavailable", zap.String("method", r.Method), zap.String("path", loggedPath(r)), zap.Error(err))
		w.Header().Set("Retry-After", unavailableRetryAfter)
		e = &herald.Error{Kind: herald.KindUnavailable, Code: herald.CodeServiceUnavailable,
			Detail: "The service is temporarily unavailable. Try again later."}
	default:
		s.log.Error("unexpected error", zap.String("method", r.Method), zap.String("path", loggedPath(r)), zap.Error(err))
		e = &herald.Error{Kind: herald.KindInternal, Code: herald.CodeUnexpectedError, Detail: "Unexpected error."}
	}
	status, ok := statusOfKind[e.Kind]
	if !ok {
		status = http.StatusInternalServerError
	}
	s.writeProblem(w, r, status, e)
}

func (s *Server) writeProblem(w http.ResponseWriter, r *http.Request, status int, e *herald.Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(e.RetryAfter)))
	}
	params := e.Parameters
	if params == nil {
		params = []any{}
	}
	s.writeJSON(w, r, status, errorBody{Detail: e.Detail, Error: status, ErrorCode: e.Code, Parameters: params,
		Reason: http.StatusText(status)}, "application/json")
}

// withLinks is the JSON of v (an object) with a links array holding its self link (none when
// self is empty: an answer that is not a resource).
func withLinks(v any, self string) (json.RawMessage, error) {
	b := newAnswerBuffer()
	defer b.release()
	if err := b.encodeLinked(v, self); err != nil {
		return nil, err
	}
	return bytes.Clone(b.buf.Bytes()), nil
}

func queryBool(r *http.Request, name string) bool {
	if r.URL.RawQuery == "" { // the usual request: nothing to parse
		return false
	}
	v, err := strconv.ParseBool(r.URL.Query().Get(name))
	return err == nil && v
}

// linkedAlert is an alert's answer: the alert, then its links.
type linkedAlert struct {
	herald.Alert
	Links []Link `json:"links"`
}

// marshal encodes v as JSON without HTML escaping: the API's bodies are not HTML, and links
// with & in their query read as they are.
func marshal(v any) ([]byte, error) {
	b := newAnswerBuffer()
	defer b.release()
	if err := b.encode(v); err != nil {
		return nil, err
	}
	return bytes.Clone(b.buf.Bytes()), nil
}

// answerBuffer is a body being encoded: a buffer, encoding/json's encoder writing into it as
// marshal does, and room for an alert with its links. Each is used again from one answer to
// the next (answerBuffers), so that the polled alert's answer makes no buffer, encoder or copy
// of the alert of its own.
type answerBuffer struct {
	buf   bytes.Buffer
	enc   *json.Encoder
	alert linkedAlert
	self  [1]Link
}

var answerBuffers = sync.Pool{New: func() any {
	b := new(answerBuffer)
	b.enc = json.NewEncoder(&b.buf)
	b.enc.SetEscapeHTML(false)
	return b
}}

// maxKeptAnswer bounds the buffers kept in answerBuffers: a larger one (a long list's) is left
// to the collector.
const maxKeptAnswer = 64 << 10

func newAnswerBuffer() *answerBuffer { return answerBuffers.Get().(*answerBuffer) }

// release gives b back to answerBuffers, holding nothing of its answer. Its bytes are then no
// longer the caller's.
func (b *answerBuffer) release() {
	b.alert, b.self = linkedAlert{}, [1]Link{}
	if b.buf.Cap() > maxKeptAnswer {
		return
	}
	b.buf.Reset()
	answerBuffers.Put(b)
}

// encode appends the JSON of v to b, as marshal encodes it.
func (b *answerBuffer) encode(v any) error {
	if err := b.enc.Encode(v); err != nil { // nothing written then
		return err
	}
	b.buf.Truncate(b.buf.Len() - 1) // the newline Encode ends with
	return nil
}

// encodeLinked appends the JSON of v (an object) to b with a links array holding its self
// link, as withLinks answers it. An alert (the polled answer) is encoded with its links in
// one go; any other object's links are spliced in after it, which keeps domain types free of
// HTTP links.
func (b *answerBuffer) encodeLinked(v any, self string) error {
	if self != "" {
		var a *herald.Alert
		switch v := v.(type) {
		case herald.Alert:
			a = &v
		case *herald.Alert:
			a = v
		}
		if a != nil {
			b.self[0] = Link{Href: self, Rel: "self"}
			b.alert = linkedAlert{*a, b.self[:]}
			return b.encode(&b.alert)
		}
	}
	start := b.buf.Len()
	if err := b.encode(v); err != nil {
		return err
	}
	obj := b.buf.Bytes()[start:]
	if self == "" || len(obj) < 2 || obj[len(obj)-1] != '}' {
		return nil
	}
	b.buf.Truncate(b.buf.Len() - 1)
	if len(obj) > 2 {
		b.buf.WriteByte(',')
	}
	b.buf.WriteString(`"links":`)
	b.self[0] = Link{Href: self, Rel: "self"}
	if err := b.encode(b.self[:]); err != nil {
		return err
	}
	b.buf.WriteByte('}')
	return nil
}
