package main

import (
	"github.com/heraldhq/herald/channels"
)

// hookSettings are the API's settings of the callbacks of the services that carry notices
// (docs/api.md#service-callbacks): a click on a chat button, a reply to a text message.
type hookSettings struct {
	// ChatBSigningSecret is HERALD_CHAT_B_SIGNING_SECRET, the chat app's signing secret
	// (environment only). Unset: clicks are refused.
	ChatBSigningSecret string
}

// hooksHelp names, in the help of HERALD_EXTERNAL_URL, the secrets the service callbacks
// under it are checked with, so that --help says which roles read them (neither is shown,
// nor taken from a flag).
const hooksHelp = "; the callbacks of chat buttons and SMS replies under it are checked with HERALD_CHAT_B_SIGNING_SECRET and HERALD_SMS_TOKEN (environment only)"

// bindHooks binds, for the roles that serve the API, the callbacks' settings. The api role
// also reads two of the workers' (herald dev binds every sender's): the SMS gateway's token,
// which signs its replies, and the chat service's address, where a clicked message may be
// updated besides the service's own hooks host.
func (c *common) bindHooks(s settings, role string) {
	s.environmentOnly(&c.Hooks.ChatBSigningSecret, "HERALD_CHAT_B_SIGNING_SECRET")
	s.check(func() error {
		if c.Hooks.ChatBSigningSecret == "" {
			return nil
		}
		return checkSecret("HERALD_CHAT_B_SIGNING_SECRET", c.Hooks.ChatBSigningSecret)
	})
	if role == "dev" {
		return
	}
	const why = " (the api role reads it for the service's callbacks: give it the workers' value)"
	c.services.bindOne(s, channels.Setting{Env: "HERALD_SMS_TOKEN", Secret: true}, "")
	c.services.bindOne(s, channels.Setting{Flag: "chat-b-url", Env: "HERALD_CHAT_B_URL", Address: true}, "CHAT_B service address"+why)
}
