package store

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

func errUserNotFound(id string) error { return herald.NotFound(herald.CodeUserNotFound, "user", id) }

// CreateUser stores a new user; the username must be unique. ev is recorded in the platform's
// events; invitations (one per project or organization the user was invited to) in theirs.
func (s *Store) CreateUser(ctx context.Context, u herald.User, ev herald.Event, invitations []herald.Event) error {
	err := s.reserveName(ctx, usernameRef(u.Username), publicKeyRef(u.Username), u.ID,
		herald.Errorf(herald.KindConflict, herald.CodeUsernameAlreadyExists, []any{u.Username},
			"A user or API key named %s already exists.", u.Username))
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, users().doc(u.ID), u); err != nil {
			return err
		}
		z := redis.Z{Score: score(u.Created), Member: u.ID}
		pipe.ZAdd(ctx, users().index(), z)
		// Who a GROUP, ORG or ADMIN notification reaches is found from these.
		for _, r := range u.Memberships() {
			switch {
			case r.GroupID != "":
				pipe.ZAdd(ctx, users().index("group", r.GroupID), z)
			case r.OrgID != "":
				pipe.ZAdd(ctx, users().index("org", r.OrgID), z)
			default:
				pipe.ZAdd(ctx, users().index("global"), z)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range append([]herald.Event{ev}, invitations...) {
		if _, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			return recordEvent(ctx, pipe, events(e.GroupID, e.OrgID), e)
		}); err != nil {
			return err
		}
	}
	return nil
}

// UserByUsername finds a user; ok is false for an unknown one.
func (s *Store) UserByUsername(ctx context.Context, username string) (herald.User, bool, error) {
	return getByName[herald.User](ctx, s.rdb, usernameRef(username), users())
}

// User reads a user by id.
func (s *Store) User(ctx context.Context, id string) (herald.User, error) {
	return getByID[herald.User](ctx, s.rdb, users().doc, id, errUserNotFound)
}

// usersPage is how many users UsersOf reads of a list in one round trip.
const usersPage = 1000

// UsersOf lists the users with a role (held or invited) in project p, in its organization, or
// a global one: everyone a notification of the project may reach, each once. It reads them all,
// a page at a time: however many a project has, none is left out (a limit once left everyone
// past the first 10,000 of a list unnotified, without a word).
func (s *Store) UsersOf(ctx context.Context, p herald.Project) ([]herald.User, error) {
	var out []herald.User
	seen := map[string]bool{}
	for _, idx := range []string{users().index("group", p.ID), users().index("org", p.OrgID), users().index("global")} {
		for off := int64(0); ; off += usersPage {
			ids, err := s.rdb.ZRange(ctx, idx, off, off+usersPage-1).Result()
			if err != nil {
				return nil, err
			}
			unique := make([]string, 0, len(ids))
			for _, id := range ids {
				if !seen[id] {
					seen[id] = true
					unique = append(unique, id)
				}
			}
			us, err := getMany[herald.User](ctx, s, users(), unique)
			if err != nil {
				return nil, err
			}
			out = append(out, us...)
			if len(ids) < usersPage {
				break
			}
		}
	}
	return out, nil
}

// claimName sets the unique name ref to id, or answers taken when another holds it.
func (s *Store) claimName(ctx context.Context, ref, id string, taken error) error {
	ok, err := s.rdb.SetNX(ctx, ref, id, 0).Result()
	if err != nil {
		return err
	}
	if !ok {
		return taken
	}
	return nil
}

// reserveName takes name for a new credential: ref, the name's reference in the credential's
// own kind (users' names, keys' public keys), is set to id if free, and then other, its
// reference in the other kind, must be free too. The two kinds share one namespace at login
// (a key of a user's name shadows the user, who could never sign in again), so a user must not
// be named like a key, nor a key like a user. The references live in slots of their own on a
// Cluster, so the two are not checked at once: of two callers racing for one name in both
// kinds, each reserves its own and at least one sees the other's and gives its own back
// (both may). taken is the error of a name taken either way.
func (s *Store) reserveName(ctx context.Context, ref, other, id string, taken error) error {
	if err := s.claimName(ctx, ref, id, taken); err != nil {
		return err
	}
	n, err := s.rdb.Exists(ctx, other).Result()
	if err == nil && n == 0 {
		return nil
	}
	if gone := s.rdb.Del(ctx, ref).Err(); gone != nil { // the reservation is this caller's alone
		return errors.Join(err, gone)
	}
	if err != nil {
		return err
	}
	return taken
}
