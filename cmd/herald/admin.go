package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/store"
)

const adminUsage = `herald admin: set up a deployment from the command line, on its Redis.

  herald admin create-key --desc TEXT [--role GLOBAL_OWNER[,ROLE...]] [--org ORG_ID]
      an API key: global roles, or with --org organization roles (ORG_OWNER, ...);
      prints its private key once
  herald admin create-org --name NAME
      an organization; prints its id
  herald admin create-project --org ORG_ID --name NAME [--tags a,b]
      a project with the default alert configurations; prints its id

Each needs the deployment's Redis: HERALD_REDIS_URL, HERALD_REDIS_SENTINELS with
HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER. 'herald admin COMMAND --help' lists a command's settings.
`

// adminActor is who the audit events of herald admin name.
var adminActor = herald.Principal{Username: "herald-admin", RemoteAddress: "local"}

// runAdmin creates what a new deployment needs before the API can be used.
func runAdmin(ctx context.Context, args []string, out, errOut io.Writer) error {
	commands := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"create-key": adminCreateKey, "create-org": adminCreateOrg, "create-project": adminCreateProject,
	}
	if len(args) == 0 || commands[args[0]] == nil {
		fmt.Fprint(errOut, adminUsage)
		if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
			return nil
		}
		return fmt.Errorf("unknown admin command %q", args[0])
	}
	return commands[args[0]](ctx, args[1:], out, errOut)
}

// adminStore parses a command's settings (bind adds its own) and opens the deployment's store.
func adminStore(ctx context.Context, name, summary string, args []string, out io.Writer, bind func(settings)) (*store.Store, func(), error) {
	var r redisSettings
	s := newSettings("admin "+name, summary, out)
	r.bind(s)
	bind(s)
	if err := s.parse(args); err != nil {
		return nil, nil, err
	}
	if !r.configured() {
		return nil, nil, errors.New("herald admin needs a Redis: HERALD_REDIS_URL, HERALD_REDIS_SENTINELS with HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER")
	}
	return openStore(ctx, r)
}

func adminCreateKey(ctx context.Context, args []string, out, errOut io.Writer) error {
	var desc, roles, orgID string
	var rs []herald.Role
	st, closeStore, err := adminStore(ctx, "create-key", "create an API key", args, out, func(s settings) {
		s.string(&desc, "desc", "HERALD_KEY_DESC", "created by herald admin", "description of the key")
		s.string(&roles, "role", "HERALD_KEY_ROLES", herald.GlobalOwner, "comma-separated roles: global ones, or organization ones with --org")
		s.string(&orgID, "org", "HERALD_KEY_ORG", "", "organization the key belongs to (default: a global key)")
		s.check(func() (err error) { rs, err = keyRoles(roles, orgID); return err })
	})
	if err != nil {
		return err
	}
	defer closeStore()
	if orgID != "" {
		if _, err := st.Org(ctx, orgID); err != nil {
			return err
		}
	}
	k, priv := api.NewAPIKey(desc, orgID, rs, time.Now())
	var ev *herald.Event
	if orgID != "" {
		e := herald.NewEvent(herald.EventAPIKeyCreated, adminActor, herald.Scope{OrgID: orgID}, time.Now())
		e.TargetPublicKey = k.PublicKey
		ev = &e
	}
	if err := st.CreateAPIKey(ctx, k, ev); err != nil {
		return err
	}
	fmt.Fprintf(out, "id:          %s\npublic key:  %s\nprivate key: %s  (shown once; keep it safe)\n", k.ID, k.PublicKey, priv)
	return nil
}

func adminCreateOrg(ctx context.Context, args []string, out, errOut io.Writer) error {
	var name string
	st, closeStore, err := adminStore(ctx, "create-org", "create an organization", args, out, func(s settings) {
		s.string(&name, "name", "HERALD_ORG_NAME", "", "name of the organization")
	})
	if err != nil {
		return err
	}
	defer closeStore()
	if name = strings.TrimSpace(name); name == "" {
		return errors.New("create-org needs --name")
	}
	now := time.Now()
	o := herald.Org{ID: herald.NewID(now), Name: name, Created: herald.At(now)}
	if err := st.CreateOrg(ctx, o, herald.NewEvent(herald.EventOrgCreated, adminActor, herald.Scope{}, now)); err != nil {
		return err
	}
	fmt.Fprintln(out, o.ID)
	return nil
}

func adminCreateProject(ctx context.Context, args []string, out, errOut io.Writer) error {
	var name, orgID, tags string
	st, closeStore, err := adminStore(ctx, "create-project", "create a project with the default alert configurations", args, out, func(s settings) {
		s.string(&name, "name", "HERALD_PROJECT_NAME", "", "name of the project")
		s.string(&orgID, "org", "HERALD_PROJECT_ORG", "", "organization the project belongs to")
		s.string(&tags, "tags", "HERALD_PROJECT_TAGS", "", "comma-separated tags (global alert configurations select projects by them)")
	})
	if err != nil {
		return err
	}
	defer closeStore()
	if name = strings.TrimSpace(name); name == "" || orgID == "" {
		return errors.New("create-project needs --org and --name")
	}
	if _, err := st.Org(ctx, orgID); err != nil {
		return err
	}
	var ts []string
	for _, t := range strings.Split(tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			ts = append(ts, t)
		}
	}
	now := time.Now()
	p, configs := herald.NewProject(name, orgID, ts, now)
	ev := herald.NewEvent(herald.EventGroupCreated, adminActor, herald.Scope{OrgID: orgID}, now)
	ev.GroupID = p.ID
	if err := st.CreateProject(ctx, p, configs, ev); err != nil {
		return err
	}
	fmt.Fprintln(out, p.ID)
	return nil
}

// keyRoles reads create-key's --role for a key of organization orgID ("": a global key). An
// organization role without --org is the usual slip: the message says to add it.
func keyRoles(list, orgID string) ([]herald.Role, error) {
	var rs []herald.Role
	for _, r := range strings.Split(list, ",") {
		r = strings.TrimSpace(r)
		switch {
		case orgID == "" && herald.ValidOrgRole(r):
			return nil, fmt.Errorf("%s is an organization role: add --org ORG_ID to create a key of that organization (without --org the key is global and takes global roles such as %s)", r, herald.GlobalOwner)
		case orgID != "" && herald.ValidGlobalRole(r):
			return nil, fmt.Errorf("%s is a global role: an organization's key (--org) takes organization roles such as ORG_OWNER; leave out --org for a global key", r)
		case orgID == "" && !herald.ValidGlobalRole(r), orgID != "" && !herald.ValidOrgRole(r):
			valid, kind := herald.GlobalRoles(), "a global key"
			if orgID != "" {
				valid, kind = herald.OrgRoles(), "an organization's key"
			}
			hint := ""
			if near := herald.Nearest(r, valid); near != "" {
				hint = " Did you mean " + near + "?"
			}
			return nil, fmt.Errorf("%q is not a role %s can hold.%s It takes: %s", r, kind, hint, strings.Join(valid, ", "))
		}
		rs = append(rs, herald.Role{OrgID: orgID, RoleName: r})
	}
	return rs, nil
}
