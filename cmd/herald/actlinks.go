package main

import (
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/heraldhq/herald/actlink"
)

// actionLinks are the settings of notices' action links (docs/act.md): the
// keys that sign and verify their tokens, and the external URL links start with. The workers
// sign (their notices carry links), the API verifies (it serves the links' pages).
type actionLinks struct {
	text string       // HERALD_ACTION_KEYS, a secret: read from the environment only
	Keys actlink.Keys // parsed from it; empty: no links
	// Base is where links point: HERALD_EXTERNAL_URL (herald dev: its own address when unset).
	Base string
	// Generated says herald dev made the keys for this run.
	Generated bool
}

// actionKeysHelp names the keys' variable in the help of HERALD_EXTERNAL_URL, so that --help
// says which roles read it (it is never shown, nor taken from a flag).
const actionKeysHelp = "; with HERALD_ACTION_KEYS (environment only, a secret) notices carry action links under it"

// bind binds HERALD_ACTION_KEYS; externalURL is the role's HERALD_EXTERNAL_URL, read when the
// settings are checked. A worker (needBase) with keys and no external URL cannot make links:
// it stops at start, saying so.
func (a *actionLinks) bind(s settings, externalURL *string, needBase bool) {
	s.environmentOnly(&a.text, "HERALD_ACTION_KEYS")
	s.check(func() error {
		a.Base = *externalURL
		if a.text == "" {
			return nil
		}
		if err := checkSecret("HERALD_ACTION_KEYS", a.text); err != nil {
			return err
		}
		keys, err := actlink.ParseKeys(a.text)
		if err != nil {
			return fmt.Errorf("HERALD_ACTION_KEYS: %w: use id:secret pairs separated by commas, the signing key first, each secret at least %d characters (e.g. from openssl rand -base64 32)", err, actlink.MinSecret)
		}
		if needBase && a.Base == "" {
			return errors.New("HERALD_ACTION_KEYS is set but HERALD_EXTERNAL_URL is not: action links need the address people reach the API at, e.g. HERALD_EXTERNAL_URL=https://herald.example.com")
		}
		a.Keys = keys
		return nil
	})
}

// bindWorkerLinks binds, for the worker role, HERALD_EXTERNAL_URL and the keys.
func (c *common) bindWorkerLinks(s settings) {
	s.string(&c.ExternalURL, "external-url", "HERALD_EXTERNAL_URL", "", "scheme and host people reach the API at"+actionKeysHelp)
	s.check(func() error { return checkExternalURL(c.ExternalURL) })
	c.Actions.bind(s, &c.ExternalURL, true)
}

// useDevKeys gives herald dev action links when the operator set no keys: a key made for this
// run, and links under base (its own address) unless HERALD_EXTERNAL_URL says otherwise.
func (a *actionLinks) useDevKeys(base string) {
	if a.Keys.Empty() {
		keys, err := actlink.ParseKeys(actlink.NewKey("dev"))
		if err != nil {
			panic("actlink.NewKey makes a key ParseKeys refuses: " + err.Error())
		}
		a.Keys, a.Generated = keys, true
	}
	if a.Base == "" {
		a.Base = base
	}
}

// linker is the worker's maker of action links: nil, after saying so once in the log, when
// there are no keys.
func (a actionLinks) linker(log *zap.Logger) (*actlink.Linker, error) {
	if a.Keys.Empty() {
		log.Info("notices carry no action links: set HERALD_ACTION_KEYS (and HERALD_EXTERNAL_URL) on the workers and the API to turn them on")
		return nil, nil
	}
	l, err := actlink.NewLinker(a.Keys, a.Base)
	if err != nil {
		return nil, err
	}
	log.Info("notices carry action links", zap.String("base", l.Base()), zap.Strings("keyIds", a.Keys.IDs()))
	return l, nil
}

// describeAPI says once, at the API's start, whether it takes action links.
func (a actionLinks) describeAPI(log *zap.Logger) {
	if a.Keys.Empty() {
		log.Info("action links are off: without HERALD_ACTION_KEYS notices carry none and /act/ refuses every one; set it (the workers' keys) to turn them on")
		return
	}
	log.Info("the API takes action links", zap.Strings("keyIds", a.Keys.IDs()))
}
