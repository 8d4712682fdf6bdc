package api

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
)

// handler serves one endpoint: it decodes, authorizes, calls the store and returns what to
// encode. Errors are answered with the error body.
type handler func(c *call) (reply, error)

// call is one request being served.
type call struct {
	s         *Server
	r         *http.Request
	ctx       context.Context
	who       herald.Principal
	now       time.Time
	bodyLimit int64       // the endpoint's
	pending   *keptCheck  // the authentication check left for the endpoint's read (readcheck.go)
	params    *pathValues // the path's values as ServeHTTP found them (nil: the request's own)
}

// reply is what an endpoint answers: one resource (with its self link) or a list.
type reply struct {
	status int
	one    any
	self   string
	body   []byte // one with its links, encoded already (nil: one is encoded when answered)
	list   *listBody
	bare   bool // one is encoded as it is, without links (nil: no body)
	secret bool // it shows a secret (a private key, once): Cache-Control: no-store
}

// listBody is the document's list response; Status is added under envelope=true.
type listBody struct {
	Links      []Link `json:"links"`
	Results    []any  `json:"results"` // each a json.RawMessage, or an alert with its links
	TotalCount int    `json:"totalCount"`
	Status     int    `json:"status,omitempty"`
}

// envelope wraps a single result under envelope=true.
type envelope struct {
	Content json.RawMessage `json:"content"`
	Status  int             `json:"status"`
}

func (s *Server) endpoint(rt route) *endpointHandler {
	h, bodyLimit := rt.handle, cmp.Or(bodyLimits[rt.pattern], defaultBodyLimit)
	return &endpointHandler{func(w http.ResponseWriter, r *http.Request) {
		c := newCall(w)
		*c = call{s: s, r: r, ctx: r.Context(), now: s.cfg.Clock.Now(), bodyLimit: bodyLimit}
		c.who, c.pending, c.params = authenticated(w)
		rep, err := c.serve(h)
		switch s.settle(c) { // nothing is answered before the request's check passed
		case checkFailed:
			return
		case serveAgain:
			rep, err = c.serve(h)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if rep.status == 0 {
			rep.status = http.StatusOK
		}
		if rep.secret { // no cache, shared or the client's own, keeps it
			w.Header()["Cache-Control"] = noStore
		}
		if rep.status == http.StatusNoContent || (rep.bare && rep.one == nil) {
			w.WriteHeader(rep.status)
			return
		}
		if rep.bare {
			s.writeJSON(w, r, rep.status, rep.one, "application/json")
			return
		}
		env := queryBool(r, "envelope")
		if rep.list != nil {
			if env {
				rep.list.Status = rep.status
			}
			s.writeJSON(w, r, rep.status, rep.list, "application/json")
			return
		}
		body := rep.body
		if body == nil {
			b := newAnswerBuffer()
			defer b.release()
			if err := b.encodeLinked(rep.one, rep.self); err != nil {
				s.writeError(w, r, err)
				return
			}
			body = b.buf.Bytes()
		}
		if env {
			s.writeJSON(w, r, rep.status, envelope{Content: body, Status: rep.status}, "application/json")
		} else {
			s.writeEncoded(w, r, rep.status, body, "application/json") // encoded already: not again
		}
	}}
}

// newCall is room for the call of a request to an endpoint (w its ServeHTTP's): in the
// request's record when ServeHTTP made one.
func newCall(w http.ResponseWriter) *call {
	if rec, ok := w.(*statusRecorder); ok {
		return &rec.call
	}
	return new(call)
}

// serve runs h after checking the shared query parameters.
func (c *call) serve(h handler) (reply, error) {
	if err := c.checkQuery(); err != nil {
		return reply{}, err
	}
	return h(c)
}

// checkQuery validates the shared query parameters.
func (c *call) checkQuery() error {
	if c.r.URL.RawQuery == "" { // the usual request: nothing to parse
		return nil
	}
	q := c.r.URL.Query()
	for _, name := range []string{"pretty", "envelope", "includeRaw"} {
		if v := q.Get(name); v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return herald.Invalid(herald.CodeInvalidQueryParameter, name, "Query parameter %s must be true or false.", name)
			}
		}
	}
	return nil
}

// one answers a single resource at path (under BasePath) with status.
func (c *call) one(status int, v any, path string) reply {
	return reply{status: status, one: v, self: c.url(path)}
}

// noContent answers a delete: 204 and no body.
func noContent() reply { return reply{status: http.StatusNoContent} }

// url is the absolute href of path under BasePath.
func (c *call) url(path string) string {
	base := c.s.cfg.ExternalURL
	if base == "" {
		scheme := "http"
		if c.r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + c.r.Host
	}
	return base + BasePath + path
}

// param is a path parameter.
func (c *call) param(name string) string {
	if c.params != nil {
		v, _ := c.params.get(name)
		return v
	}
	return c.r.PathValue(name)
}

// require refuses the request unless the caller's roles allow access a in scope.
func (c *call) require(a herald.Access, scope herald.Scope) error {
	if !c.who.Can(a, scope) {
		return herald.Unauthorized()
	}
	return nil
}

// grant refuses the request unless the caller may give each of roles, whose scope is scope:
// the grant ceiling (herald.Principal.CanGrant).
func (c *call) grant(scope herald.Scope, roles ...herald.Role) error {
	for _, r := range roles {
		if !c.who.CanGrant(r, scope) {
			return herald.Unauthorized()
		}
	}
	return nil
}

// project loads the project of the {groupId} path parameter and checks the caller may make a
// request of kind a in it. A caller who could not act in an existing project either is told
// only that: whether a project it has no role in exists is none of its business.
func (c *call) project(a herald.Access) (herald.Project, error) {
	p, err := c.s.store.Project(c.ctx, c.param("groupId"))
	return c.authorizeProject(a, p, err)
}

// org checks the caller may make a request of kind a in the {orgId} organization and reads
// it.
func (c *call) org(a herald.Access) (herald.Org, error) {
	id := c.param("orgId")
	if err := c.require(a, herald.Scope{OrgID: id}); err != nil {
		return herald.Org{}, err
	}
	return c.s.store.Org(c.ctx, id)
}

// projectItem checks the caller may make a request of kind a in the {groupId} project and
// reads, with read, the project's item that the path parameter param names.
func projectItem[T any](c *call, a herald.Access, param string, read func(ctx context.Context, groupID, id string) (T, error)) (herald.Project, T, error) {
	p, err := c.project(a)
	if err != nil {
		var none T
		return p, none, err
	}
	v, err := read(c.ctx, p.ID, c.param(param))
	return p, v, err
}

// projectRequest checks the caller may make a request of kind a in the {groupId} project and
// decodes the request's body as a T.
func projectRequest[T any](c *call, a herald.Access) (herald.Project, T, error) {
	var in T
	p, err := c.project(a)
	if err == nil {
		err = c.decode(&in)
	}
	return p, in, err
}

// globalRequest checks the caller may make a request of kind a outside any organization and
// decodes the request's body as a T.
func globalRequest[T any](c *call, a herald.Access) (T, error) {
	var in T
	err := c.require(a, herald.Scope{})
	if err == nil {
		err = c.decode(&in)
	}
	return in, err
}

// authorizeProject is project's answer to the project read (err its error): the project, or
// why the caller may not have it.
func (c *call) authorizeProject(a herald.Access, p herald.Project, err error) (herald.Project, error) {
	id := c.param("groupId")
	if herald.IsNotFound(err) {
		if c.who.Can(a, herald.Scope{GroupID: id}) {
			return p, err
		}
		return p, herald.Unauthorized()
	}
	if err != nil {
		return p, err
	}
	return p, c.require(a, p.Scope())
}

// event is an audit event of type typ made by this request in scope.
func (c *call) event(typ string, scope herald.Scope) herald.Event {
	return herald.NewEvent(typ, c.who, scope, c.now)
}

// decodeJSON is decode's core, separate so the fuzz test can drive it. A syntax error says
// where in body it is.
func decodeJSON(body []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return invalidJSON(syntax.Error(), position(body, syntax.Offset))
		}
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body must hold one JSON value.")
	}
	return nil
}

// invalidJSON is the answer to a body that is not JSON: what the parser found, and where.
func invalidJSON(what, where string) error {
	return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body is not valid JSON: %s, at %s.", what, where)
}

// position is where the syntax error that encoding/json found after reading offset bytes of
// body is, as an editor shows it: line and column (1-based, in bytes), and the offset (0-based).
func position(body []byte, offset int64) string {
	i := int(min(max(offset-1, 0), int64(len(body))))
	before := body[:i]
	line := bytes.Count(before, []byte("\n")) + 1
	col := i - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d (offset %d)", line, col, i)
}

// decodeError is the answer to a body that could not be decoded (for a syntax error without
// its position: decodeJSON and decodeItems say where).
func decodeError(err error) error {
	var (
		syntax   *json.SyntaxError
		typ      *json.UnmarshalTypeError
		tooLarge *http.MaxBytesError
	)
	switch {
	case errors.As(err, &tooLarge):
		return herald.Errorf(herald.KindInvalid, herald.CodeRequestTooLarge, []any{tooLarge.Limit},
			"The request body is larger than %d bytes.", tooLarge.Limit)
	case errors.Is(err, io.EOF):
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body is empty.")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body is not valid JSON: it ends inside a value.")
	case errors.As(err, &syntax):
		return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body is not valid JSON: %s.", syntax)
	case errors.As(err, &typ) && typ.Type == reflect.TypeFor[herald.Time]():
		field := requestPath(typ.Field)
		return herald.Invalid(herald.CodeInvalidDate, field, "Attribute %s must be an ISO 8601 date-time such as 2026-11-24T09:30:00Z: %s given.", field, typ.Value)
	case errors.As(err, &typ):
		field := requestPath(typ.Field)
		if field == "" {
			want := "object"
			if k := typ.Type.Kind(); k == reflect.Slice || k == reflect.Array {
				want = "array"
			}
			return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body must be a JSON %s.", want)
		}
		return herald.InvalidAttribute(field, "Attribute %s has the wrong type: %s given.", field, typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return herald.InvalidAttribute(field, "Attribute %s is not recognized.", field)
	}
	return herald.Errorf(herald.KindInvalid, herald.CodeInvalidJSON, nil, "The request body could not be read.")
}

// requestPath is a field path of encoding/json as the request names it: encoding/json also
// names the Go structs a request type embeds ("AlertRuleInput.enabled"), and no request field
// starts with an upper-case letter.
func requestPath(goPath string) string {
	var names []string
	for _, name := range strings.Split(goPath, ".") {
		if name != "" && !unicode.IsUpper(rune(name[0])) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ".")
}

// page reads and validates pageNum and itemsPerPage.
func (c *call) page() (pageParams, error) {
	p := pageParams{Num: 1, Size: defaultItemsPerPage}
	q := c.r.URL.Query()
	for _, f := range []struct {
		name string
		dst  *int
		max  int
	}{{"pageNum", &p.Num, maxPageNum}, {"itemsPerPage", &p.Size, maxItemsPerPage}} {
		v := q.Get(f.name)
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > f.max {
			return p, herald.Invalid(herald.CodeInvalidQueryParameter, f.name, "Query parameter %s must be a whole number from 1 to %d.", f.name, f.max)
		}
		*f.dst = n
	}
	return p, nil
}

const (
	defaultItemsPerPage = 100
	maxItemsPerPage     = 500
	// maxPageNum keeps a page's offset ((pageNum-1) × itemsPerPage) and the next page's
	// number far from overflowing an int: a larger pageNum is a 400, not a panic.
	maxPageNum = math.MaxInt32
)

// pageParams is the page a list request asks for.
type pageParams struct{ Num, Size int }

func (p pageParams) store() store.Page {
	return store.Page{Offset: (p.Num - 1) * p.Size, Limit: p.Size}
}

// list answers a page of items. self gives each item's path; the list's own links keep the
// caller's query and set pageNum and itemsPerPage. Alerts (the lists polled most) are encoded
// with their links once, with the list; any other item is encoded with its links spliced in
// (withLinks), and copied into the list as it is.
func list[T any](c *call, items []T, total int, p pageParams, self func(T) string) (reply, error) {
	results := make([]any, 0, len(items))
	for _, it := range items {
		href := c.url(self(it))
		if a, ok := any(it).(herald.Alert); ok {
			results = append(results, linkedAlert{a, []Link{{Href: href, Rel: "self"}}})
			continue
		}
		b, err := withLinks(it, href)
		if err != nil {
			return reply{}, err
		}
		results = append(results, b)
	}
	return reply{list: &listBody{Links: c.pageLinks(p, total), Results: results, TotalCount: total}}, nil
}

func (c *call) pageLinks(p pageParams, total int) []Link {
	at := func(num int) string {
		q := c.r.URL.Query()
		q.Set("pageNum", strconv.Itoa(num))
		q.Set("itemsPerPage", strconv.Itoa(p.Size))
		return c.url(strings.TrimPrefix(c.r.URL.Path, BasePath)) + "?" + q.Encode()
	}
	links := []Link{{Href: at(p.Num), Rel: "self"}}
	if p.Num*p.Size < total {
		links = append(links, Link{Href: at(p.Num + 1), Rel: "next"})
	}
	if p.Num > 1 {
		links = append(links, Link{Href: at(p.Num - 1), Rel: "previous"})
	}
	return links
}

// queryTime reads an optional ISO 8601 query parameter.
func (c *call) queryTime(name string) (time.Time, error) {
	v := c.r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, ok := herald.ParseTime(v)
	if !ok {
		return time.Time{}, herald.Invalid(herald.CodeInvalidQueryParameter, name, "Query parameter %s must be an ISO 8601 date-time.", name)
	}
	return t.Time, nil
}

// escape is a path segment as it goes into a link.
func escape(s string) string { return url.PathEscape(s) }
