package jsonfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

// Each Writer quotes every string exactly as its Marshal does, whichever path it takes.
// MarshalNoHTML writes what encoding/json writes, but for <, > and &, which it leaves as
// they are.
func TestMarshalNoHTML(t *testing.T) {
	v := map[string]any{"href": "http://h/?a=1&b=<2>", "n": 1.5, "l": []string{"x"}}
	got, err := MarshalNoHTML(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"href":"http://h/?a=1&b=<2>","l":["x"],"n":1.5}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if _, err := MarshalNoHTML(func() {}); err == nil {
		t.Fatal("a func encoded")
	}
}

func TestStringQuotesAsMarshal(t *testing.T) {
	for _, w := range []Writer{{Marshal: json.Marshal, EscapeHTML: true}, {Marshal: MarshalNoHTML}} {
		for _, s := range []string{"", "plain", "a b-c_d.e/f:g", `q"uote`, `back\slash`, "<b>&amp;</b>",
			"tab\there", "nl\n", "cr\r\n", "Alert OPEN: X\nHost: \"h\"\t\\n\n", "a\nb<c>", "line\n\u00e9", "\x00", "\b\f", "\x7f", "é", "\u2028", "\xff", "emoji 🚨"} {
			want, err := w.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.String([]byte("x"), s); !bytes.Equal(got, append([]byte("x"), want...)) {
				t.Errorf("EscapeHTML %v, %q: got %s, want x%s", w.EscapeHTML, s, got, want)
			}
		}
	}
}

// FuzzString: whatever the string, String writes what its Writer's Marshal writes.
func FuzzString(f *testing.F) {
	for _, s := range []string{"plain", "a\"b\\c\n\r\t", "<&>", "\x00\x1f\x7f", "é\xff\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, w := range []Writer{{Marshal: json.Marshal, EscapeHTML: true}, {Marshal: MarshalNoHTML}} {
			want, err := w.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.String(nil, s); !bytes.Equal(got, want) {
				t.Errorf("EscapeHTML %v, %q: got %s, want %s", w.EscapeHTML, s, got, want)
			}
		}
	})
}

func TestFields(t *testing.T) {
	w := Writer{Marshal: json.Marshal, EscapeHTML: true}
	n := int64(-42)
	var err error
	b := []byte("{")
	b = w.StringField(b, "empty", "")
	b = w.StringField(b, "s", "v")
	b = IntField(b, "none", nil)
	b = IntField(b, "n", &n)
	b = w.ValueField(b, "absent", []int{1}, false, &err)
	b = w.ValueField(b, "l", []string{"a"}, true, &err)
	if got, want := string(b), `{,"s":"v","n":-42,"l":["a"]`; got != want || err != nil {
		t.Fatalf("got %s (%v), want %s", got, err, want)
	}

	failing := Writer{Marshal: func(any) ([]byte, error) { return nil, errors.New("no") }}
	b = failing.ValueField(nil, "x", 1, true, &err)
	b = w.ValueField(b, "y", 2, true, &err) // nothing more once err is set
	if err == nil || len(b) != 0 {
		t.Fatalf("after a value that does not encode: %q, %v", b, err)
	}
}
