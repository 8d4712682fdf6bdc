package api

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api/digest"
	"github.com/heraldhq/herald/store"
)

// NewAPIKey makes a key: a public key of 8 lower-case letters and a private key in the form of
// a UUID, shown once in the creating response and afterwards kept only as the digest HA1.
func NewAPIKey(desc, orgID string, roles []herald.Role, now time.Time) (herald.APIKey, string) {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 8+16)
	if _, err := rand.Read(b); err != nil {
		panic("api: no randomness for keys: " + err.Error())
	}
	pub := make([]byte, 8)
	for i := range pub {
		pub[i] = letters[int(b[i])%len(letters)]
	}
	u := b[8:]
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80 // a version 4 UUID
	priv := fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	return KeyFromPair(desc, orgID, roles, string(pub), priv, now), priv
}

// KeyFromPair makes a key from a given public and private key (HERALD_BOOTSTRAP_KEY).
func KeyFromPair(desc, orgID string, roles []herald.Role, public, private string, now time.Time) herald.APIKey {
	tail := private
	if len(tail) > 4 {
		tail = tail[len(tail)-4:]
	}
	return herald.APIKey{ID: herald.NewID(now), Desc: desc, PublicKey: public, HA1: digest.HA1(public, private),
		MonitoringHA1:  digest.HA1In(digest.MonitoringRealm, public, private),
		PrivateKeyTail: tail, OrgID: orgID, Roles: roles, Created: herald.At(now)}
}

// createdKey is a key as its creating response shows it: the private key in the clear, once.
type createdKey struct {
	herald.APIKeyView
}

type keyRequest struct {
	Desc  *string  `json:"desc"`
	Roles []string `json:"roles"`
}

// roles validates the role names of a key request: at least one, each valid for the scope.
// A role named twice is held once.
func (in keyRequest) roles(valid []string, what string) ([]string, error) {
	if len(in.Roles) == 0 {
		return nil, herald.MissingAttribute("roles")
	}
	names := make([]string, 0, len(in.Roles))
	for _, r := range in.Roles {
		if !slices.Contains(valid, r) {
			return nil, herald.NotOneOf("roles", r, valid, "%s is not a %s role.", r, what)
		}
		if !slices.Contains(names, r) {
			names = append(names, r)
		}
	}
	return names, nil
}

// maxDescLength is the platform's limit on an API key's description.
const maxDescLength = 250

// createKey creates a key of organization orgID ("" a global key) from the request's body: valid
// are the role names it may hold, what their kind for the error. The caller must be allowed to
// give the roles.
func (c *call) createKey(orgID string, valid []string, what string) (reply, error) {
	var in keyRequest
	if err := c.decode(&in); err != nil {
		return reply{}, err
	}
	names, err := in.roles(valid, what)
	if err != nil {
		return reply{}, err
	}
	roles := make([]herald.Role, len(names))
	for i, n := range names {
		roles[i] = herald.Role{OrgID: orgID, RoleName: n}
	}
	if err := c.grant(herald.Scope{OrgID: orgID}, roles...); err != nil {
		return reply{}, err
	}
	if in.Desc == nil || strings.TrimSpace(*in.Desc) == "" {
		return reply{}, herald.MissingAttribute("desc")
	}
	desc := strings.TrimSpace(*in.Desc)
	if utf8.RuneCountInString(desc) > maxDescLength {
		return reply{}, herald.InvalidAttribute("desc", "desc must be at most %d characters.", maxDescLength)
	}
	k, priv := NewAPIKey(desc, orgID, roles, c.now)
	ev := c.event(herald.EventAPIKeyCreated, herald.Scope{OrgID: orgID})
	ev.TargetPublicKey = k.PublicKey
	ev.Raw["keyId"] = k.ID
	if err := c.s.store.CreateAPIKey(c.ctx, k, &ev); err != nil {
		return reply{}, err
	}
	view := k.View()
	view.PrivateKey = priv
	rep := c.one(http.StatusCreated, createdKey{view}, keyPath(k))
	rep.secret = true
	return rep, nil
}

// POST /admin/apiKeys
func (s *Server) createGlobalAPIKey(c *call) (reply, error) {
	if err := c.require(herald.OwnGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return c.createKey("", herald.GlobalRoles(), "global")
}

// POST /orgs/{orgId}/apiKeys
func (s *Server) createOrgAPIKey(c *call) (reply, error) {
	o, err := c.org(herald.OwnOrg)
	if err != nil {
		return reply{}, err
	}
	return c.createKey(o.ID, herald.OrgRoles(), "organization")
}

// GET /admin/apiKeys
func (s *Server) listGlobalAPIKeys(c *call) (reply, error) {
	if err := c.require(herald.ReadGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	return paged(c, func(pg store.Page) ([]herald.APIKeyView, int, error) {
		keys, total, err := s.store.GlobalAPIKeys(c.ctx, pg)
		return views(keys, herald.APIKey.View), total, err
	}, func(k herald.APIKeyView) string { return "/admin/apiKeys/" + k.ID })
}

type assignRequest struct {
	Roles []string `json:"roles"`
}

// PATCH /groups/{groupId}/apiKeys/{apiKeyId}: give an organization key roles in the project.
// The key must belong to the project's organization.
func (s *Server) assignAPIKey(c *call) (reply, error) {
	p, in, err := projectRequest[assignRequest](c, herald.AssignAPIKey)
	if err != nil {
		return reply{}, err
	}
	names, err := keyRequest{Roles: in.Roles}.roles(herald.ProjectRoles(), "project")
	if err != nil {
		return reply{}, err
	}
	id := c.param("apiKeyId")
	k, err := s.store.APIKey(c.ctx, id)
	if err != nil {
		return reply{}, err
	}
	// The ceiling covers the roles given and those taken away: a caller neither raises a key
	// (itself included) above its own roles nor changes one that outranks it. It is judged on
	// the key as written, not as read here: an owner may be raising it meanwhile.
	given := make([]herald.Role, len(names))
	for i, n := range names {
		given[i] = herald.Role{GroupID: p.ID, RoleName: n}
	}
	allowed := func(k herald.APIKey) error {
		if k.OrgID != p.OrgID {
			return herald.NotFound(herald.CodeAPIKeyNotFound, "API key", id)
		}
		held := slices.DeleteFunc(slices.Clone(k.Roles), func(r herald.Role) bool { return r.GroupID != p.ID })
		return c.grant(p.Scope(), append(slices.Clone(given), held...)...)
	}
	if err := allowed(k); err != nil {
		return reply{}, err
	}
	ev := c.event(herald.EventAPIKeyAddedToGroup, p.Scope())
	ev.TargetPublicKey = k.PublicKey
	ev.Raw["keyId"], ev.Raw["roles"] = k.ID, names
	k, err = s.store.AssignAPIKey(c.ctx, id, p.ID, names, ev, allowed)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, k.View(), keyPath(k)), nil
}

// GET /admin/apiKeys/{apiKeyId}: a global key.
func (s *Server) getGlobalAPIKey(c *call) (reply, error) {
	if err := c.require(herald.ReadGlobal, herald.Scope{}); err != nil {
		return reply{}, err
	}
	k, err := c.apiKey("")
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, k.View(), keyPath(k)), nil
}

// GET /orgs/{orgId}/apiKeys/{apiKeyId}: a key of the organization, for its owners.
func (s *Server) getOrgAPIKey(c *call) (reply, error) {
	orgID := c.param("orgId")
	if err := c.require(herald.OwnOrg, herald.Scope{OrgID: orgID}); err != nil {
		return reply{}, err
	}
	k, err := c.apiKey(orgID)
	if err != nil {
		return reply{}, err
	}
	return c.one(http.StatusOK, k.View(), keyPath(k)), nil
}

// keyPath is the path of key k: under its organization, or under /admin for a global key.
func keyPath(k herald.APIKey) string {
	if k.OrgID == "" {
		return "/admin/apiKeys/" + k.ID
	}
	return "/orgs/" + k.OrgID + "/apiKeys/" + k.ID
}

// apiKey reads the {apiKeyId} key of organization orgID ("" a global key); any other key is
// not found.
func (c *call) apiKey(orgID string) (herald.APIKey, error) {
	id := c.param("apiKeyId")
	k, err := c.s.store.APIKey(c.ctx, id)
	if err == nil && k.OrgID != orgID {
		err = herald.NotFound(herald.CodeAPIKeyNotFound, "API key", id)
	}
	return k, err
}
