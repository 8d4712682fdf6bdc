package store

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

var (
	errOrgNotFound     = func(id string) error { return herald.NotFound(herald.CodeOrgNotFound, "organization", id) }
	errProjectNotFound = func(id string) error { return herald.NotFound(herald.CodeGroupNotFound, "project", id) }
)

// CreateOrg stores a new organization; its name must be unique.
func (s *Store) CreateOrg(ctx context.Context, o herald.Org, ev herald.Event) error {
	err := s.claimName(ctx, orgName(o.Name), o.ID, herald.Errorf(herald.KindConflict, herald.CodeOrgNameAlreadyExists,
		[]any{o.Name}, "An organization named %s already exists.", o.Name))
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, orgs().doc(o.ID), o); err != nil {
			return err
		}
		pipe.ZAdd(ctx, orgs().index(), redis.Z{Score: score(o.Created), Member: o.ID})
		return recordEvent(ctx, pipe, events("", ""), ev)
	})
	return err
}

// Org reads an organization.
func (s *Store) Org(ctx context.Context, id string) (herald.Org, error) {
	var o herald.Org
	return o, get(ctx, s.rdb, orgs().doc(id), &o, errOrgNotFound(id))
}

// CreateProject stores a new project with its first alert configurations, registers it in the
// index of all projects and in its organization's (one MULTI), and records ev in its
// organization (and projectEvents in the project). Its name must be unique in the
// organization. The project, its configurations and projectEvents commit together on the
// project's slot before the project is listed anywhere else.
func (s *Store) CreateProject(ctx context.Context, p herald.Project, configs []herald.AlertConfig, ev herald.Event, projectEvents ...herald.Event) error {
	err := s.claimName(ctx, projectName(p.OrgID, p.Name), p.ID, herald.Errorf(herald.KindConflict, herald.CodeGroupNameAlreadyExists,
		[]any{p.Name}, "A project named %s already exists in this organization.", p.Name))
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		if err := set(ctx, pipe, projectDoc(p.ID), p); err != nil {
			return err
		}
		for _, c := range configs {
			if err := putAlertConfig(ctx, pipe, c); err != nil {
				return err
			}
		}
		return recordEvents(ctx, pipe, events(p.ID, ""), projectEvents)
	})
	if err != nil {
		return err
	}
	if _, err := s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		z := redis.Z{Score: score(p.Created), Member: p.ID}
		pipe.ZAdd(ctx, projectIndex(), z)
		pipe.ZAdd(ctx, orgProjectIndex(p.OrgID), z)
		return nil
	}); err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		return recordEvent(ctx, pipe, events("", p.OrgID), ev)
	})
	return err
}

// Project reads a project.
func (s *Store) Project(ctx context.Context, id string) (herald.Project, error) {
	return getByID[herald.Project](ctx, s.rdb, projectDoc, id, errProjectNotFound)
}

// ProjectIDs lists the ids of all projects, oldest first, a page at a time.
func (s *Store) ProjectIDs(ctx context.Context, p Page) ([]string, error) {
	return s.rdb.ZRange(ctx, projectIndex(), int64(p.Offset), int64(p.Offset+p.Limit-1)).Result()
}
