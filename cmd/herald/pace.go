package main

import (
	"strings"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/store"
)

// paceKind is the setting type of a pace per target (HERALD_PACE_<KIND>).
var paceKind = kind{arg: "RATE", form: `"off", or a rate N/s, N/m or N/h with an optional burst`, example: "1/s,burst=5"}

// bindPaces binds HERALD_PACE_<KIND> for every kind dispatch.DefaultPaces paces, into c.Paces
// once parsed.
func (c *common) bindPaces(s settings) {
	paces := map[string]*store.Pace{}
	for _, k := range herald.Kinds() {
		def, ok := dispatch.DefaultPaces[k.Name]
		if !ok {
			continue
		}
		p := new(store.Pace)
		paces[k.Name] = p
		flagName := "pace-" + strings.ToLower(strings.ReplaceAll(k.Name, "_", "-"))
		bindValue(s, p, flagName, dispatch.PaceSetting(k.Name), def,
			"how fast one "+k.Name+" target (one address, number, channel, key or URL) is sent notices, shared by every worker", paceKind,
			dispatch.ParsePace, dispatch.FormatPace)
	}
	s.check(func() error {
		c.Paces = map[string]store.Pace{}
		for name, p := range paces {
			c.Paces[name] = *p
		}
		return nil
	})
}
