package api

import "time"

// RoutePatterns is every endpoint's "METHOD /path/{param}", from the route table, for the
// tests of package api_test.
func RoutePatterns() []string {
	var s *Server // the handlers are only named, never called
	var out []string
	for _, rt := range s.routes() {
		out = append(out, rt.pattern)
	}
	return out
}

// Body limits, for the test that the README states them.
const (
	DefaultBodyLimit      = defaultBodyLimit
	ObservationsBodyLimit = observationsBodyLimit
)

// ClientNetwork is what failed authentications are counted against, for its table test.
var ClientNetwork = clientNetwork

// SetActDigestBudget sets how long acknowledging a digest's alerts may start new
// acknowledgements, until the test ends.
func SetActDigestBudget(t interface{ Cleanup(func()) }, d time.Duration) {
	was := actDigestBudget
	actDigestBudget = d
	t.Cleanup(func() { actDigestBudget = was })
}
