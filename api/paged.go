package api

import "github.com/heraldhq/herald/store"

// paged answers the page of a list that the query asks for: read reads that page and the
// list's total, self gives each item's path. Filters read inside read are checked after the
// page parameters.
func paged[T any](c *call, read func(store.Page) ([]T, int, error), self func(T) string) (reply, error) {
	pg, err := c.page()
	if err != nil {
		return reply{}, err
	}
	items, total, err := read(pg.store())
	if err != nil {
		return reply{}, err
	}
	return list(c, items, total, pg, self)
}

// pageOf is page p of all, a list read whole, and the list's total.
func pageOf[T any](all []T, p store.Page) ([]T, int) {
	return all[min(p.Offset, len(all)):min(p.Offset+p.Limit, len(all))], len(all)
}

// views is each of items as view shows it.
func views[T, V any](items []T, view func(T) V) []V {
	out := make([]V, len(items))
	for i, it := range items {
		out[i] = view(it)
	}
	return out
}
