package memo

import "testing"

// A value is made once per key, and a bounded map forgets everything when full, then makes
// values again.
func TestGet(t *testing.T) {
	var m Map[int, int]
	made := 0
	square := func(k int) int { made++; return k * k }
	for range 2 {
		if v := m.Get(3, 2, square); v != 9 {
			t.Fatalf("Get(3) = %d, want 9", v)
		}
	}
	if made != 1 {
		t.Fatalf("made %d times, want once", made)
	}
	m.Get(4, 2, square)
	if m.Len() != 2 {
		t.Fatalf("%d values held, want 2", m.Len())
	}
	m.Get(5, 2, square) // full: all forgotten, then 5 kept
	if m.Len() != 1 {
		t.Fatalf("%d values held after the bound, want 1", m.Len())
	}
	if m.Get(3, 2, square); made != 4 {
		t.Fatalf("made %d times, want 4: 3 made again once forgotten", made)
	}
	var unbounded Map[int, int]
	for i := range 100 {
		unbounded.Get(i, 0, square)
	}
	if unbounded.Len() != 100 {
		t.Fatalf("unbounded map holds %d, want 100", unbounded.Len())
	}
}
