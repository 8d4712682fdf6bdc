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
)

const adminUsage = `herald admin: set up a deployment from the command line.

  herald admin create-key --desc TEXT --role GLOBAL_OWNER[,ROLE...]
      a global API key; prints its private key once

Needs HERALD_REDIS_URL. Organizations and projects are created through the API
(POST /orgs, POST /groups) with a global owner key.
`

// runAdmin creates what a new deployment needs before the API can be used.
func runAdmin(ctx context.Context, args []string, out, errOut io.Writer) error {
	if len(args) == 0 || args[0] != "create-key" {
		fmt.Fprint(errOut, adminUsage)
		if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
			return nil
		}
		return fmt.Errorf("unknown admin command %q", args[0])
	}
	var redisURL, desc, roles string
	s := newSettings("admin create-key", "create a global API key", errOut)
	s.string(&redisURL, "redis-url", "HERALD_REDIS_URL", "", "Redis the deployment keeps its state in")
	s.string(&desc, "desc", "HERALD_KEY_DESC", "created by herald admin", "description of the key")
	s.string(&roles, "role", "HERALD_KEY_ROLES", herald.GlobalOwner, "comma-separated global roles")
	if err := s.fs.Parse(args[1:]); err != nil {
		return err
	}
	if redisURL == "" {
		return errors.New("herald admin needs HERALD_REDIS_URL")
	}
	var rs []herald.Role
	for _, r := range strings.Split(roles, ",") {
		r = strings.TrimSpace(r)
		if !herald.ValidGlobalRole(r) {
			return fmt.Errorf("%q is not a global role", r)
		}
		rs = append(rs, herald.Role{RoleName: r})
	}
	st, closeStore, err := openStore(ctx, redisURL)
	if err != nil {
		return err
	}
	defer closeStore()
	k, priv := api.NewAPIKey(desc, "", rs, time.Now())
	if err := st.CreateAPIKey(ctx, k, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "public key:  %s\nprivate key: %s  (shown once; keep it safe)\n", k.PublicKey, priv)
	return nil
}
