package main

import (
	"strconv"
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

// bindDigests binds HERALD_DIGEST_AFTER and HERALD_DIGEST_WINDOW, each read by its one parser
// (dispatch.ParseDigestAfter, ParseDigestWindow).
func (c *common) bindDigests(s settings) {
	bindValue(s, &c.DigestAfter, "digest-after", dispatch.SettingDigestAfter, dispatch.DefaultDigestAfter,
		"how many messages one target people read (an address, a number, a chat channel) takes one by one in a window: more go out together as one digest; 0: no digests",
		kind{arg: "N", form: "a whole number from 0", example: "3"}, dispatch.ParseDigestAfter, strconv.Itoa)
	bindValue(s, &c.DigestWindow, "digest-window", dispatch.SettingDigestWindow, dispatch.DefaultDigestWindow,
		"the window of --digest-after, in minutes of HERALD_MINUTE's length",
		kind{arg: "MINUTES", form: "a whole number of minutes from 1", example: "5"}, dispatch.ParseDigestWindow, strconv.Itoa)
}
