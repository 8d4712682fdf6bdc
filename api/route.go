package api

import (
	"net/http"
	"net/url"
	"strings"
)

// A request is matched to its route once: ServeHTTP asks the mux which pattern serves it
// before authenticating (so that refused requests count by route, and the polled endpoints'
// check can go with their read), then calls that route's endpoint itself with the path's
// values, so that the mux does not match it again. Anything else the mux answers (redirects to
// the cleaned path or to a trailing slash, 404, 405) goes through the mux, after
// authentication.

// mounted is a route as the mux serves it.
type mounted struct {
	h        *endpointHandler
	withRead bool     // its check goes in its read's round trip (checkedWithRead)
	segments []string // the mounted pattern's path split at "/"
	wild     []int    // the indexes in segments of its wildcards ({name})
	names    []string // their names, in order
	direct   bool     // ServeHTTP may call h itself (no wildcard values can tell apart)
}

// maxWildcards is the most wildcards a route ServeHTTP calls itself has ({groupId}, {hostId},
// {partitionName}); one with more is served through the mux.
const maxWildcards = 3

// mount makes the mounted form of pattern ("METHOD /path") served by h. A route with a
// multi-segment wildcard ({name...}) or the end anchor ({$}) is served through the mux.
func mount(pattern string, h *endpointHandler, withRead bool) *mounted {
	_, path, _ := strings.Cut(pattern, " ")
	m := &mounted{h: h, withRead: withRead, segments: strings.Split(path, "/"), direct: true}
	for i, seg := range m.segments {
		if len(seg) < 2 || seg[0] != '{' || seg[len(seg)-1] != '}' {
			continue
		}
		name := seg[1 : len(seg)-1]
		if strings.HasSuffix(name, "...") || name == "$" {
			m.direct = false
		}
		m.wild, m.names = append(m.wild, i), append(m.names, name)
	}
	if len(m.wild) > maxWildcards {
		m.direct = false
	}
	return m
}

// values are the wildcards' values of escapedPath, a path the mux matched to m as it is (no
// redirect): each the unescaped segment at the wildcard's place, as the mux's own matching
// makes them (an invalid escape kept as it is). ok is false if the path does not split like
// the pattern (a pattern ending in "/" matches longer paths): the mux then serves it.
func (m *mounted) values(escapedPath string) (p pathValues, ok bool) {
	if !m.direct {
		return p, false
	}
	p.names = m.names
	rest, n, last := escapedPath, 0, len(m.segments)-1
	for i := range m.segments {
		part := rest
		if i < last {
			j := strings.IndexByte(rest, '/')
			if j < 0 {
				return p, false
			}
			part, rest = rest[:j], rest[j+1:]
		} else if strings.IndexByte(part, '/') >= 0 || (m.segments[i] == "" && part != "") {
			return p, false
		}
		if n < len(m.wild) && m.wild[n] == i {
			p.vals[n] = pathUnescape(part)
			n++
		}
	}
	return p, true
}

// pathUnescape is a segment unescaped as the mux unescapes it: kept as it is when invalid.
func pathUnescape(seg string) string {
	u, err := url.PathUnescape(seg)
	if err != nil {
		return seg
	}
	return u
}

// pathValues are a request's path values found by mounted.values.
type pathValues struct {
	names []string
	vals  [maxWildcards]string
}

// get is the value of the wildcard name, and whether the route has one.
func (p *pathValues) get(name string) (string, bool) {
	for i, n := range p.names {
		if n == name {
			return p.vals[i], true
		}
	}
	return "", false
}

// endpointHandler is a route's endpoint as the mux holds it (a pointer: ServeHTTP compares
// the handler the mux found with its route's).
type endpointHandler struct{ serve http.HandlerFunc }

func (e *endpointHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.serve(w, r) }
