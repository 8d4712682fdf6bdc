package store

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Hash tags: all keys of one tag live on one Redis Cluster slot.
const (
	globalTag = "{global}"
	keysTag   = "{keys}"
	usersTag  = "{users}"
)

func groupTag(groupID string) string { return "{g:" + groupID + "}" }

// projectOfKey is the project whose slot key is on (herald:{g:<project>}:...), and the rest
// of the key after the tag's colon; ok is false for a key of any other tag.
func projectOfKey(key string) (groupID, rest string, ok bool) {
	after, ok := strings.CutPrefix(key, "herald:{g:")
	if !ok {
		return "", "", false
	}
	groupID, rest, ok = strings.Cut(after, "}:")
	return groupID, rest, ok
}
func orgTag(orgID string) string { return "{o:" + orgID + "}" }

// key builds "herald:<tag>:<part>:<part>..." (in one allocation: keys are built on every
// request's path).
func key(tag string, parts ...string) string {
	n := len("herald:") + len(tag) + len(parts)
	for _, p := range parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("herald:")
	b.WriteString(tag)
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// collection is a kind of document under one tag: documents at <name>:<id>, indexes at
// <name>s[:<sub>...].
type collection struct{ tag, name string }

func (c collection) doc(id string) string { return key(c.tag, c.name, id) }

// Events keep their documents as fields of one hash per scope (<name>docs, the field the id's
// 12 bytes) rather than a key each: a key costs Redis some 130 bytes besides its value, a hash
// field some 60, and every open alert has its opening event. Events written before, at keys
// of their own, are still read and deleted there.
func (c collection) inHash() bool              { return c.name == "event" }
func (c collection) docsHash() string          { return key(c.tag, c.name+"docs") }
func (c collection) docField(id string) string { return docField(id) }
func (c collection) delDoc(ctx context.Context, pipe redis.Pipeliner, id string) {
	if c.inHash() {
		pipe.HDel(ctx, c.docsHash(), c.docField(id))
	}
	pipe.Del(ctx, c.doc(id))
}

// setDoc queues writing a document's stored form b.
func (c collection) setDoc(ctx context.Context, pipe redis.Pipeliner, id string, b []byte) {
	if c.inHash() {
		pipe.HSet(ctx, c.docsHash(), c.docField(id), b)
		return
	}
	pipe.Set(ctx, c.doc(id), b, 0)
}

// docField is the hash field of a document's id: the 12 bytes of an id of herald's form, any
// other id as it is after a mark (never 12 bytes long, so the two never meet).
func docField(id string) string {
	if b, ok := idBytes(id); ok {
		return string(b[:])
	}
	return markRaw(id)
}

// idBytes are the 12 bytes an id of herald's form spells in lower-case hex (as
// hex.EncodeToString writes them: an id in upper-case digits is another id, kept as it is).
// They are returned by value, on the caller's stack: every alert the engine writes has
// several ids made into fields, members and packed forms.
func idBytes(id string) (b [12]byte, ok bool) {
	if len(id) != 2*len(b) {
		return b, false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return b, false
		}
	}
	_, err := hex.Decode(b[:], []byte(id))
	return b, err == nil
}

// idOfField is the id a docField (or an id written whole, as fields and values were before)
// stands for.
func idOfField(f string) string {
	if len(f) == 12 {
		return hex.EncodeToString([]byte(f))
	}
	if raw, ok := strings.CutPrefix(f, rawIDMark+rawIDMark); ok && len(f) == 13 {
		return raw
	}
	if raw, ok := strings.CutPrefix(f, rawIDMark); ok {
		return raw
	}
	return f
}

// targetField is the hash field of a TargetID: its 12 bytes, or any other target after a mark.
func targetField(target string) string {
	var b [12]byte // decoded on the stack: the engine makes two fields of each target it looks up or opens
	if len(target) == 16 {
		if n, err := base64.RawURLEncoding.Decode(b[:], []byte(target)); err == nil && n == 12 {
			return string(b[:])
		}
	}
	return markRaw(target)
}

// markRaw is s after the raw mark, doubled where the result would be 12 bytes long.
func markRaw(s string) string {
	if len(s) == 11 {
		return rawIDMark + rawIDMark + s
	}
	return rawIDMark + s
}

// Event, alert and heartbeat indexes list each item by its id's 12 bytes (docField) rather than its 24
// hex digits: a sorted-set member of 16 bytes rather than 32 (Redis's size classes), some 23
// bytes less an entry as measured, and an open alert has three entries (status,
// configuration, due). The order within a second is the same (hex digits sort as the bytes
// they spell). Members written before, whole ids, are read alike and removed with either form;
// within a second, one written before sorts before one written now (an id's first byte, of
// its creation time, is above every hex digit's since October 2024), which only a rolling
// upgrade within that second can show. Other
// collections list ids as they are.
func (c collection) binaryMembers() bool {
	return c.inHash() || c.name == "alert" || c.name == "galert" || c.name == "hb"
}

// isAlerts reports whether c is a collection of alerts, a project's or the global one.
func (c collection) isAlerts() bool { return c.name == "alert" || c.name == "galert" }

// indexMember is the member that lists id in an index of c.
func (c collection) indexMember(id string) string {
	if c.binaryMembers() {
		return docField(id)
	}
	return id
}

// idsOfMembers are the ids index members stand for (members, rewritten in place).
func (c collection) idsOfMembers(members []string) []string {
	if c.binaryMembers() {
		for i, m := range members {
			members[i] = idOfField(m)
		}
	}
	return members
}

// indexMembers are the members an id may have in an index of c: as written now, and before.
func (c collection) indexMembers(id string) []any {
	if m := c.indexMember(id); m != id {
		return []any{m, id}
	}
	return []any{id}
}

// groupID is the project whose slot c is on, "" for a collection of another slot.
func (c collection) groupID() string {
	g, ok := strings.CutPrefix(c.tag, "{g:")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(g, "}")
}

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
