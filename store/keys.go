package store

import "strings"

// Hash tags: all keys of one tag live on one Redis Cluster slot.
const (
	globalTag = "{global}"
	keysTag   = "{keys}"
	usersTag  = "{users}"
)

func groupTag(groupID string) string { return "{g:" + groupID + "}" }
func orgTag(orgID string) string     { return "{o:" + orgID + "}" }

// key builds "herald:<tag>:<part>:<part>...".
func key(tag string, parts ...string) string {
	return "herald:" + tag + ":" + strings.Join(parts, ":")
}

// collection is a kind of document under one tag: documents at <name>:<id>, indexes at
// <name>s[:<sub>...].
type collection struct{ tag, name string }

func (c collection) doc(id string) string { return key(c.tag, c.name, id) }
func (c collection) index(sub ...string) string {
	return key(c.tag, append([]string{c.name + "s"}, sub...)...)
}

// The collections.
func orgs() collection                       { return collection{globalTag, "org"} }
func apiKeys() collection                    { return collection{keysTag, "apikey"} }
func users() collection                      { return collection{usersTag, "user"} }
func alertConfigs(groupID string) collection { return collection{groupTag(groupID), "alertconfig"} }
func globalAlertConfigs() collection         { return collection{globalTag, "galertconfig"} }
func alerts(groupID string) collection       { return collection{groupTag(groupID), "alert"} }
func globalAlerts() collection               { return collection{globalTag, "galert"} }
func windows(groupID string) collection      { return collection{groupTag(groupID), "mw"} }
func hosts(groupID string) collection        { return collection{groupTag(groupID), "host"} }

// events of a scope: a project's, an organization's, or the platform's.
func events(groupID, orgID string) collection {
	switch {
	case groupID != "":
		return collection{groupTag(groupID), "event"}
	case orgID != "":
		return collection{orgTag(orgID), "event"}
	}
	return collection{globalTag, "event"}
}

// Single keys.
func projectDoc(groupID string) string       { return key(groupTag(groupID), "project") }
func projectName(orgID, name string) string  { return key(globalTag, "groupname", orgID, name) }
func orgName(name string) string             { return key(globalTag, "orgname", name) }
func publicKeyRef(publicKey string) string   { return key(keysTag, "pub", publicKey) }
func usernameRef(username string) string     { return key(usersTag, "name", username) }
func integrationsHash(groupID string) string { return key(groupTag(groupID), "integrations") }

// disksSet is a host's disk partitions, a sorted set scored by when each was last reported.
// Before hosts were purged they were a plain set under legacyDisksSet: a new name rather than
// a WRONGTYPE on upgrade; agents report every partition again within a minute, and a purged
// host takes its legacy set with it.
func disksSet(groupID, hostID string) string {
	return key(groupTag(groupID), "host", hostID, "partitions")
}
func legacyDisksSet(groupID, hostID string) string {
	return key(groupTag(groupID), "host", hostID, "disks")
}
func nonceCount(nonce string) string { return "herald:{nonce:" + nonce + "}:nc" }
func nonceSecret() string            { return key(keysTag, "nonce-secret") }
func projectIndex() string           { return key(globalTag, "groups") }
