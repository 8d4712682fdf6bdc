package sms

import "strings"

// The GSM 7-bit alphabet (3GPP TS 23.038): a text of only these characters fits 160 of them
// in one segment; one other character makes the whole text UCS-2, 70 to a segment. The
// extension table's characters take two places each.
const (
	gsmBasic     = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtension = "^{}\\[~]|€"
)

// toGSM replaces each character outside the GSM 7-bit alphabet with '?'.
func toGSM(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(gsmBasic, r) || strings.ContainsRune(gsmExtension, r) {
			return r
		}
		return '?'
	}, s)
}

// gsmLen is how many places of a segment s takes (all of it in the GSM 7-bit alphabet).
func gsmLen(s string) int {
	n := 0
	for _, r := range s {
		n++
		if strings.ContainsRune(gsmExtension, r) {
			n++
		}
	}
	return n
}

// cutGSM cuts s to at most n places, ending a cut text with ellipsis.
func cutGSM(s string, n int, ellipsis string) string {
	if gsmLen(s) <= n {
		return s
	}
	room := n - gsmLen(ellipsis)
	var b strings.Builder
	for _, r := range s {
		w := 1
		if strings.ContainsRune(gsmExtension, r) {
			w = 2
		}
		if room < w {
			break
		}
		room -= w
		b.WriteRune(r)
	}
	return b.String() + ellipsis
}

// Segments is how many segments a text takes: 160 places of GSM 7-bit characters in one, 153
// each once concatenated; a text with other characters is UCS-2, 70 in one, 67 each beyond.
func Segments(s string) int {
	n, one, many := gsmLen(s), 160, 153
	if toGSM(s) != s {
		n, one, many = len([]rune(s)), 70, 67 // every character a place (UTF-16 pairs aside)
	}
	if n <= one {
		return 1
	}
	return (n + many - 1) / many
}
