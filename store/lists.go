package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
)

// Lists of organizations and projects, oldest first (by creation, then id, as the indexes
// order members of one second). All projects page from the index of all projects; an
// organization's projects from its own index (orgProjectIndex), on the same slot so that
// several organizations' projects page together in one script.

// orgProjectIndex is organization orgID's projects, scored by creation. It shares the slot of
// the index of all projects: CreateProject adds to both in one MULTI.
func orgProjectIndex(orgID string) string { return key(globalTag, "groups", "org", orgID) }

// orgProjectsBuilt marks that every project listed in the index of all projects is in its
// organization's index too. Projects stored before these indexes existed are added on the
// first read that needs them (buildOrgProjectIndexes).
func orgProjectsBuilt() string { return key(globalTag, "groups", "byorg") }

// oldestFirst orders items created at a and b with ids aID and bID as the indexes do: by
// score (the second), then id.
func oldestFirst(a herald.Time, aID string, b herald.Time, bID string) int {
	return cmp.Or(cmp.Compare(score(a), score(b)), cmp.Compare(aID, bID))
}

// Orgs lists all organizations, a page at a time, and how many there are.
func (s *Store) Orgs(ctx context.Context, p Page) ([]herald.Org, int, error) {
	return list[herald.Org](ctx, s, orgs(), orgs().index(), TimeRange{}, false, p)
}

// OrgsByID reads the organizations of ids that exist, oldest first. The caller bounds ids
// (a principal's roles).
func (s *Store) OrgsByID(ctx context.Context, ids []string) ([]herald.Org, error) {
	os, err := getMany[herald.Org](ctx, s, orgs(), validIDs(ids))
	if err != nil {
		return nil, err
	}
	slices.SortFunc(os, func(a, b herald.Org) int { return oldestFirst(a.Created, a.ID, b.Created, b.ID) })
	return os, nil
}

// Projects lists all projects, a page at a time, and how many there are.
func (s *Store) Projects(ctx context.Context, p Page) ([]herald.Project, int, error) {
	var count *redis.IntCmd
	var ids *redis.StringSliceCmd
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		count = pipe.ZCard(ctx, projectIndex())
		ids = pipe.ZRange(ctx, projectIndex(), int64(p.Offset), int64(p.Offset+p.Limit-1))
		return nil
	}); err != nil {
		return nil, 0, err
	}
	ps, err := s.projectsByID(ctx, ids.Val())
	return ps, int(count.Val()), err
}

// ReadableProjects lists, a page at a time, the projects of organizations orgIDs together
// with projects groupIDs (those of other organizations; the caller bounds both by a
// principal's roles), and how many there are.
func (s *Store) ReadableProjects(ctx context.Context, orgIDs, groupIDs []string, p Page) ([]herald.Project, int, error) {
	inOrgs, seen := map[string]bool{}, map[string]bool{}
	for _, id := range orgIDs {
		inOrgs[id] = true
	}
	extra, err := s.projectsByID(ctx, groupIDs)
	if err != nil {
		return nil, 0, err
	}
	// Each project once: not when its organization's index lists it, nor twice here.
	extra = slices.DeleteFunc(extra, func(pr herald.Project) bool {
		drop := inOrgs[pr.OrgID] || seen[pr.ID]
		seen[pr.ID] = true
		return drop
	})
	if len(orgIDs) == 0 {
		slices.SortFunc(extra, func(a, b herald.Project) int { return oldestFirst(a.Created, a.ID, b.Created, b.ID) })
		return extra[min(p.Offset, len(extra)):min(p.Offset+p.Limit, len(extra))], len(extra), nil
	}
	keys := []string{orgProjectsBuilt()}
	for id := range inOrgs {
		keys = append(keys, orgProjectIndex(id))
	}
	args := []any{p.Offset, p.Limit}
	for _, pr := range extra {
		args = append(args, strconv.FormatInt(pr.Created.Unix(), 10), pr.ID)
	}
	vals, err := unionPage.Run(ctx, s.rdb, keys, args...).Slice()
	if err == nil && len(vals) == 1 && vals[0] == int64(-1) { // the indexes are not built yet
		if err = s.buildOrgProjectIndexes(ctx); err == nil {
			vals, err = unionPage.Run(ctx, s.rdb, keys, args...).Slice()
		}
	}
	if err != nil || len(vals) == 0 {
		return nil, 0, err
	}
	total, _ := vals[0].(int64)
	ids := make([]string, 0, len(vals)-1)
	for _, v := range vals[1:] {
		id, _ := v.(string)
		ids = append(ids, id)
	}
	ps, err := s.projectsByID(ctx, ids)
	return ps, int(total), err
}

// unionPage is one page, oldest first (by score, then member), of the union of disjoint
// sorted sets KEYS[2]... and the members ARGV[4], ARGV[6]... (in none of them) scored ARGV[3],
// ARGV[5]..., skipping ARGV[1] members and returning ARGV[2], after the union's size; or -1
// alone while mark KEYS[1] (orgProjectsBuilt) is missing. One set and no other members page in
// Redis's own ZRANGE; otherwise the sets are walked side by side in chunks up to the page's
// end, as mergedPage walks them newest first.
var unionPage = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local skip, want = tonumber(ARGV[1]), tonumber(ARGV[2])
local function before(a, b)
  if a[2] ~= b[2] then return a[2] < b[2] end
  for k = 1, math.min(#a[1], #b[1]) do
    local x, y = string.byte(a[1], k), string.byte(b[1], k)
    if x ~= y then return x < y end
  end
  return #a[1] < #b[1]
end
-- Source 1 is the members of ARGV, whole and sorted here; source i > 1 is set KEYS[i].
local bufs, pos, taken, cards = {{}}, {1}, {0}, {0}
for j = 3, #ARGV, 2 do bufs[1][#bufs[1]+1] = {ARGV[j+1], tonumber(ARGV[j])} end
table.sort(bufs[1], before)
taken[1], cards[1] = #bufs[1], #bufs[1]
local total, nonempty, only = cards[1], 0, nil
for i = 2, #KEYS do
  cards[i] = redis.call('ZCARD', KEYS[i])
  total = total + cards[i]
  if cards[i] > 0 then nonempty, only = nonempty + 1, i end
end
local out = {total}
if skip >= total then return out end
if cards[1] == 0 and nonempty == 1 then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[only], skip, skip + want - 1)) do out[#out+1] = m end
  return out
end
local chunk = math.min(math.max(skip + want, 16), 512)
local function fill(i)
  if pos[i] > #bufs[i] and taken[i] < cards[i] then
    local got = redis.call('ZRANGE', KEYS[i], taken[i], taken[i] + chunk - 1, 'WITHSCORES')
    local b = {}
    for j = 1, #got, 2 do b[#b+1] = {got[j], tonumber(got[j+1])} end
    taken[i] = taken[i] + #b
    bufs[i], pos[i] = b, 1
  end
end
for i = 2, #KEYS do bufs[i], pos[i], taken[i] = {}, 1, 0; fill(i) end
local n, first = 0, before
` + mergeWalk)

// projectsByID reads the projects of ids that exist, in order: one pipeline, each document on
// its own project's slot.
func (s *Store) projectsByID(ctx context.Context, ids []string) ([]herald.Project, error) {
	cmds := make([]*redis.StringCmd, 0, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, id := range ids {
			if herald.ValidID(id) {
				cmds = append(cmds, pipe.Get(ctx, projectDoc(id)))
			}
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]herald.Project, 0, len(cmds))
	for _, cmd := range cmds {
		var pr herald.Project
		found := true
		if err := decodeAnswer(cmd, &pr, func() error { found = false; return nil }); err != nil {
			return nil, err
		}
		if found {
			out = append(out, pr)
		}
	}
	return out, nil
}

// buildOrgProjectIndexes adds every project of the index of all projects to its
// organization's index and marks them built: projects stored before those indexes existed are
// listed by organization too. It reads the projects a page at a time; running it twice (two
// API processes at once) adds nothing twice.
func (s *Store) buildOrgProjectIndexes(ctx context.Context) error {
	for off := int64(0); ; off += repairPage {
		ids, err := s.rdb.ZRange(ctx, projectIndex(), off, off+repairPage-1).Result()
		if err != nil {
			return err
		}
		ps, err := s.projectsByID(ctx, ids)
		if err != nil {
			return err
		}
		if _, err := s.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, pr := range ps {
				pipe.ZAdd(ctx, orgProjectIndex(pr.OrgID), redis.Z{Score: score(pr.Created), Member: pr.ID})
			}
			return nil
		}); err != nil {
			return err
		}
		if len(ids) < repairPage {
			break
		}
	}
	return s.rdb.Set(ctx, orgProjectsBuilt(), "1", 0).Err()
}
