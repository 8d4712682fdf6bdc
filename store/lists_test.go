package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/store"
	"github.com/heraldhq/herald/store/storetest"
)

// listFixture is a store with organizations a and b, projects a0..a2 in a and b0, b1 in b,
// each created a second after the one before (a0, b0, a1, b1, a2).
type listFixture struct {
	st       *store.Store
	a, b     herald.Org
	projects map[string]herald.Project
}

func newListFixture(t *testing.T, rdb *redis.Client) listFixture {
	t.Helper()
	ctx := context.Background()
	st := store.New(rdb)
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	who := herald.Principal{APIKeyID: "k", PublicKey: "pub"}
	f := listFixture{st: st, projects: map[string]herald.Project{}}
	for i, o := range []*herald.Org{&f.a, &f.b} {
		at := start.Add(time.Duration(i) * time.Second)
		*o = herald.Org{ID: herald.NewID(at), Name: []string{"a", "b"}[i], Created: herald.At(at)}
		if err := st.CreateOrg(ctx, *o, herald.NewEvent(herald.EventOrgCreated, who, herald.Scope{}, at)); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"a0", "b0", "a1", "b1", "a2"} {
		at := start.Add(time.Minute + time.Duration(i)*time.Second)
		org := map[byte]string{'a': f.a.ID, 'b': f.b.ID}[name[0]]
		p, configs := herald.NewProject(name, org, nil, at)
		if err := st.CreateProject(ctx, p, configs, herald.NewEvent(herald.EventGroupCreated, who, herald.Scope{OrgID: org}, at)); err != nil {
			t.Fatal(err)
		}
		f.projects[name] = p
	}
	return f
}

func projectNames(ps []herald.Project) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func (f listFixture) ids(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, f.projects[n].ID)
	}
	return out
}

func wantProjects(t *testing.T, what string, ps []herald.Project, total int, err error, wantTotal int, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := projectNames(ps); !slices.Equal(got, want) || total != wantTotal {
		t.Errorf("%s: %v of %d, want %v of %d", what, got, total, want, wantTotal)
	}
}

// All projects and organizations page oldest first, with their totals.
func TestListAllOrgsAndProjects(t *testing.T) {
	ctx := context.Background()
	f := newListFixture(t, storetest.Redis(t))
	ps, total, err := f.st.Projects(ctx, store.Page{Offset: 1, Limit: 3})
	wantProjects(t, "all projects, page 2 of 3", ps, total, err, 5, "b0", "a1", "b1")
	ps, total, err = f.st.Projects(ctx, store.Page{Offset: 5, Limit: 3})
	wantProjects(t, "all projects past the end", ps, total, err, 5)
	os, total, err := f.st.Orgs(ctx, store.Page{Offset: 0, Limit: 10})
	if err != nil || len(os) != 2 || os[0].ID != f.a.ID || os[1].ID != f.b.ID || total != 2 {
		t.Errorf("orgs: %v of %d, %v", os, total, err)
	}
	os, err = f.st.OrgsByID(ctx, []string{f.b.ID, "5f0000000000000000000000", "not an id", f.a.ID})
	if err != nil || len(os) != 2 || os[0].ID != f.a.ID || os[1].ID != f.b.ID {
		t.Errorf("orgs by id: %v, %v", os, err)
	}
}

// An organization's projects page from its own index, merged in creation order with projects
// of other organizations named one by one; a project named that is in a listed organization
// counts once, and one that does not exist not at all. In Redis and in herald dev's embedded
// store alike.
func TestReadableProjects(t *testing.T) {
	for name, rdb := range map[string]func(testing.TB) *redis.Client{"redis": storetest.Redis, "embedded": storetest.Embedded} {
		t.Run(name, func(t *testing.T) { testReadableProjects(t, newListFixture(t, rdb(t))) })
	}
}

func testReadableProjects(t *testing.T, f listFixture) {
	ctx := context.Background()
	ps, total, err := f.st.ReadableProjects(ctx, []string{f.a.ID}, nil, store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "org a", ps, total, err, 3, "a0", "a1", "a2")
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID}, nil, store.Page{Offset: 1, Limit: 1})
	wantProjects(t, "org a, page 2 of 1", ps, total, err, 3, "a1")
	named := append(f.ids("b1", "a1"), "5f0000000000000000000000")
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID}, named, store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "org a and b1", ps, total, err, 4, "a0", "a1", "b1", "a2")
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID}, named, store.Page{Offset: 2, Limit: 1})
	wantProjects(t, "org a and b1, page 3 of 1", ps, total, err, 4, "b1")
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID, f.b.ID}, nil, store.Page{Offset: 1, Limit: 3})
	wantProjects(t, "orgs a and b", ps, total, err, 5, "b0", "a1", "b1")
	ps, total, err = f.st.ReadableProjects(ctx, nil, f.ids("a2", "b0"), store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "named only", ps, total, err, 2, "b0", "a2")
	ps, total, err = f.st.ReadableProjects(ctx, []string{"5f0000000000000000000000"}, nil, store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "an organization without projects", ps, total, err, 0)
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID}, nil, store.Page{Offset: 1 << 40, Limit: 500})
	wantProjects(t, "org a far past the end", ps, total, err, 3)
}

// A store written before organizations had an index of their projects lists them all the
// same: the indexes are built from the index of all projects on the first read, and kept in
// step by every project created after.
func TestReadableProjectsAfterUpgrade(t *testing.T) {
	ctx := context.Background()
	f := newListFixture(t, storetest.Redis(t))
	if err := f.st.ForgetOrgProjectIndexes(ctx, f.a.ID, f.b.ID); err != nil {
		t.Fatal(err)
	}
	ps, total, err := f.st.ReadableProjects(ctx, []string{f.b.ID}, nil, store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "org b after upgrade", ps, total, err, 2, "b0", "b1")
	at := time.Now()
	p, configs := herald.NewProject("a3", f.a.ID, nil, at)
	if err := f.st.CreateProject(ctx, p, configs, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: f.a.ID}, at)); err != nil {
		t.Fatal(err)
	}
	ps, total, err = f.st.ReadableProjects(ctx, []string{f.a.ID}, nil, store.Page{Offset: 0, Limit: 10})
	wantProjects(t, "org a after upgrade", ps, total, err, 4, "a0", "a1", "a2", "a3")
}

// Pages of several organizations' projects and projects named one by one, read at every size
// and offset, are the slices of the whole list in creation order: none missing, none twice,
// across the chunks the merge reads its indexes in.
func TestReadableProjectsPagesAreSlicesOfTheWhole(t *testing.T) {
	for name, rdb := range map[string]func(testing.TB) *redis.Client{"redis": storetest.Redis, "embedded": storetest.Embedded} {
		t.Run(name, func(t *testing.T) { testPagesAreSlicesOfTheWhole(t, store.New(rdb(t))) })
	}
}

func testPagesAreSlicesOfTheWhole(t *testing.T, st *store.Store) {
	ctx := context.Background()
	orgs := []string{herald.NewID(time.Now()), herald.NewID(time.Now()), herald.NewID(time.Now())}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	var want, named []string
	for i := range 60 {
		at := start.Add(time.Duration(i/2) * time.Second) // two projects a second: ties break by id
		p, _ := herald.NewProject("p"+herald.NewID(at), orgs[i*7%3], nil, at)
		if err := st.CreateProject(ctx, p, nil, herald.NewEvent(herald.EventGroupCreated, herald.Principal{}, herald.Scope{OrgID: p.OrgID}, at)); err != nil {
			t.Fatal(err)
		}
		switch {
		case p.OrgID != orgs[2]:
			want = append(want, p.ID)
		case i%4 == 0:
			want = append(want, p.ID)
			named = append(named, p.ID, p.ID) // named twice, listed once
		}
	}
	named = append(named, want[0]) // in a listed organization: listed once
	for _, size := range []int{1, 7, 16, 17, 33, 500} {
		var got []string
		for off := 0; off < len(want)+size; off += size {
			ps, total, err := st.ReadableProjects(ctx, orgs[:2], named, store.Page{Offset: off, Limit: size})
			if err != nil || total != len(want) {
				t.Fatalf("offset %d, size %d: total %d of %d, %v", off, size, total, len(want), err)
			}
			for _, p := range ps {
				got = append(got, p.ID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("pages of %d: %v\nwant %v", size, got, want)
		}
	}
}
