// Package memo keeps values that are costly to make and are asked for again and again by the
// same key, such as a metric's series by its labels or the Redis keys of a credential check.
// It owns no state but the maps its callers hold.
package memo

import "sync"

// Map holds values by key, each made once. The zero Map is empty and ready to use; it is safe
// for concurrent use. A value two callers make at once is made twice, and one of the two kept.
type Map[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// Get is k's value, made by make the first time. With max > 0 the map holds at most max
// values: when full it forgets them all at once, so that keys from outside cannot grow it.
func (m *Map[K, V]) Get(k K, max int, make func(K) V) V {
	m.mu.RLock()
	v, ok := m.m[k]
	m.mu.RUnlock()
	if ok {
		return v
	}
	v = make(k)
	m.mu.Lock()
	if m.m == nil || (max > 0 && len(m.m) >= max) {
		m.m = map[K]V{}
	}
	m.m[k] = v
	m.mu.Unlock()
	return v
}

// Len is how many values the map holds.
func (m *Map[K, V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.m)
}
