// Package registry lists the delivery kinds: every kind's package (channels/<kind>), and
// the kinds that reach people, which the root package declares. Importing it registers them
// with the root package (herald.RegisterKinds), so that validation, masking, fan-out and the
// queues know them: a program or test that handles notifications imports it.
//
// Adding a kind is its package, its line in Kinds, its row in docs/engine.md's table of kinds, its
// case in cmd/herald's end-to-end test of every kind and its fields in the API's documentation
// (docs/engine.md lists them); tests fail until each is there.
package registry

import (
	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/channels"
	"github.com/heraldhq/herald/channels/alertinga"
	"github.com/heraldhq/herald/channels/alertingb"
	"github.com/heraldhq/herald/channels/chata"
	"github.com/heraldhq/herald/channels/chatb"
	"github.com/heraldhq/herald/channels/chatc"
	"github.com/heraldhq/herald/channels/email"
	"github.com/heraldhq/herald/channels/metricsa"
	"github.com/heraldhq/herald/channels/paging"
	"github.com/heraldhq/herald/channels/sms"
	"github.com/heraldhq/herald/channels/webhook"
)

// Kinds are the delivery kinds, in the order the API lists their typeNames.
var Kinds = []channels.Kind{
	email.Kind,
	sms.Kind,
	{Kind: herald.UserKind},
	{Kind: herald.GroupKind},
	{Kind: herald.OrgKind},
	{Kind: herald.AdminKind},
	paging.Kind,
	alertinga.Kind,
	alertingb.Kind,
	chata.Kind,
	chatb.Kind,
	chatc.Kind,
	metricsa.Kind,
	webhook.Kind,
}

func init() {
	kinds := make([]herald.Kind, len(Kinds))
	for i, k := range Kinds {
		kinds[i] = k.Kind
	}
	herald.RegisterKinds(kinds...)
}
