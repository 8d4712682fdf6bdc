package api

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/alertjson"
	"github.com/heraldhq/herald/internal/jsonfield"
)

// GET of one alert is the endpoint agents and dashboards poll, and encoding/json's reflection
// was most of encoding its answer: appendAlert writes the same bytes as marshal (encoding/json
// without HTML escaping) of a herald.Alert, by hand (alertjson). A test compares the two for
// every field.

// answered writes members as marshal does.
var answered = jsonfield.Writer{Marshal: marshal}

// appendAlert appends marshal(a)'s bytes to b.
func appendAlert(b []byte, a *herald.Alert) ([]byte, error) { return alertjson.Append(b, a, answered) }

// appendSelfLink appends the links member holding the self link, as withLinks splices it.
func appendSelfLink(b []byte, self string) []byte {
	b = answered.String(append(b, `"links":[{"href":`...), self)
	return append(b, `,"rel":"self"}]`...)
}
