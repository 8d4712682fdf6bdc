package herald

import (
	"strings"
	"testing"
)

// Each mask as a table of what it is given and what it shows.
func TestMasks(t *testing.T) {
	for _, m := range []struct {
		name  string
		mask  func(string) string
		cases [][2]string // what it is given, what it shows
	}{
		{"MaskTail", MaskTail, [][2]string{
			{"", ""},
			{"abc", "***"},
			{"12345678", "********"}, // 8 or fewer: masked whole
			{"123456789", "*****6789"},
			{"xoxb-1234-5678-abcdefgh", "*******************efgh"},
			{"clé-secrète-ünïcode", "***************code"}, // counted in characters, never half a rune
		}},
		{"MaskURL", MaskURL, [][2]string{
			{"", ""},
			{"https://hooks.example.com", "https://hooks.example.com"},
			{"https://hooks.example.com/", "https://hooks.example.com"},
			{"https://hooks.example.com/services/T0/B0/XYZ", "https://hooks.example.com/******************"}, // as long as what it hides
			{"http://10.0.0.1:8080/hook", "http://10.0.0.1:8080/****"},
			{"https://h.example.com/a", "https://h.example.com/****"}, // never fewer than 4, so it reads as masked
			{"https://user:hunter22@hooks.example.com", "https://hooks.example.com/*************"},
			{"https://hooks.example.com?token=abcdef", "https://hooks.example.com/************"},
			{"https://hooks.example.com#token=abcdef", "https://hooks.example.com/************"},
			{"HTTPS://Hooks.Example.com/Secret", "https://Hooks.Example.com/******"},
			{"not a url", "********"},
			{"https://user:pa/ss@host/x", "********"}, // does not parse: nothing of it is shown
		}},
		{"MaskAll", MaskAll, [][2]string{
			{"", ""},
			{"s", "******"},
			{"a-much-longer-webhook-secret", "******"}, // the length does not show either
		}},
		{"MaskPrivateKey", MaskPrivateKey, [][2]string{ // given the key's tail
			{"c0de", "********-****-****-****-********c0de"},
			{"", "********-****-****-****-********"},
		}},
	} {
		for _, c := range m.cases {
			if got := m.mask(c[0]); got != c[1] {
				t.Errorf("%s(%q) = %q, want %q", m.name, c[0], got, c[1])
			}
		}
	}
}

// Whatever the URL, its user info, path, query and fragment never show.
func TestMaskURLHidesSecrets(t *testing.T) {
	for _, in := range []string{
		"https://user:hunter22@hooks.example.com/p?token=tok123#frag99",
		"https://hooks.example.com/path/tok123?sig=hunter22",
		"https://hunter22@hooks.example.com",
	} {
		got := MaskURL(in)
		for _, secret := range []string{"user", "hunter22", "tok123", "frag99", "path", "sig"} {
			if strings.Contains(got, secret) {
				t.Errorf("MaskURL(%q) = %q shows %q", in, got, secret)
			}
		}
	}
}

func TestIsMask(t *testing.T) {
	for _, s := range []string{
		MaskTail("0123456789abcdef"), MaskTail("1234"), MaskURL("https://h.example.com/x"),
		MaskAll("s"), MaskPrivateKey("abcd"), MaskURL("::"),
	} {
		if !IsMask(s) {
			t.Errorf("IsMask(%q) = false for a mask", s)
		}
	}
	for _, s := range []string{"", "0123456789abcdef", "https://hooks.example.com/T0/B0/XYZ", "a*b**c***d"} {
		if IsMask(s) {
			t.Errorf("IsMask(%q) = true for a secret", s)
		}
	}
}
