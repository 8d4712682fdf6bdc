package channels

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldhq/herald"
)

// Digest is what a delivery that tells of several alerts at once says (Delivery.Digest): in a
// storm, the notices waiting for one person's address or number, or one chat channel, go out
// together as one message.
type Digest struct {
	Opened []herald.Alert // the alerts it tells opened, most important first
	Closed []herald.Alert // the alerts it tells resolved, most important first
	Link   string         // the signed page listing every alert of it, to acknowledge them all; "" for none
}

// DigestListed is how many alerts a digest names one by one, at most; the others it counts
// ("and 12 more") and its page lists.
const DigestListed = 20

// Count is how many alerts the digest tells of.
func (g Digest) Count() int { return len(g.Opened) + len(g.Closed) }

// Headline counts what the digest tells, and where: "41 alerts opened in project prod", "12
// alerts resolved in project prod", "3 alerts opened and 2 resolved in project prod".
func (g Digest) Headline(where string) string {
	alerts := func(n int) string {
		if n == 1 {
			return "1 alert"
		}
		return strconv.Itoa(n) + " alerts"
	}
	var s string
	switch {
	case len(g.Closed) == 0:
		s = alerts(len(g.Opened)) + " opened"
	case len(g.Opened) == 0:
		s = alerts(len(g.Closed)) + " resolved"
	default:
		s = alerts(len(g.Opened)) + " opened and " + strconv.Itoa(len(g.Closed)) + " resolved"
	}
	if where != "" {
		s += " in project " + where
	}
	return s
}

// Kinds counts the digest's alerts by event type in words, the most first: "Host down ×38, No
// primary ×3".
func (g Digest) Kinds() string {
	counts := map[string]int{}
	for _, list := range [][]herald.Alert{g.Opened, g.Closed} {
		for _, a := range list {
			counts[herald.EventWords(a.EventTypeName)]++
		}
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Or(counts[b]-counts[a], strings.Compare(a, b)) })
	for i, w := range words {
		words[i] = w + " ×" + strconv.Itoa(counts[w])
	}
	return strings.Join(words, ", ")
}

// Items name the digest's alerts one by one, at most max of them ("Opened: Host down:
// db1.example.com:27017"), the openings first, then "and 12 more" for the rest.
func (g Digest) Items(max int) []string {
	var out []string
	for _, part := range []struct {
		verb   string
		alerts []herald.Alert
	}{{"Opened", g.Opened}, {"Resolved", g.Closed}} {
		for _, a := range part.alerts {
			if len(out) == max {
				break
			}
			out = append(out, part.verb+": "+herald.What(a))
		}
	}
	if rest := g.Count() - len(out); rest > 0 {
		out = append(out, "and "+strconv.Itoa(rest)+" more")
	}
	return out
}

// DigestLinkLabel is what the link of a digest says.
const DigestLinkLabel = "See every alert of this digest, acknowledge them all"

// digestNotice is what digest delivery d says, as a Notice: its headline and the event types
// counted on the first line, each alert named below it (Details), the link to its page.
func digestNotice(d Delivery) Notice {
	g := d.Digest
	status := "Open"
	if len(g.Opened) == 0 {
		status = "Resolved"
	}
	n := Notice{Headline: g.Headline(Where(d)), Status: status, What: g.Kinds(), Where: Where(d), Items: g.Items(DigestListed)}
	if g.Link != "" {
		n.Links = []Link{{DigestLinkLabel, g.Link}}
	}
	return n
}
