package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var stormKeys = flag.Bool("storm-keys", false, "scenario 5: after each Herald storm, log Redis's memory by key pattern (MEMORY USAGE of every key, ids masked), to see what an open alert costs where")

// keyIDs are the parts of key names that name one item: Herald's ids, the storm's hosts, numbers.
var keyIDs = regexp.MustCompile(`[0-9a-f]{24}|h\d+-\d+|\d{4,}`)

// keyBreakdown is the memory of every key summed by pattern (keyIDs masked), largest first,
// with each pattern's number of keys, type and encoding.
func (rs *redisServer) keyBreakdown(ctx context.Context) (string, error) {
	type pattern struct {
		name, kind string
		bytes      int64
		keys       int
	}
	byName := map[string]*pattern{}
	var cursor uint64
	for {
		keys, next, err := rs.Client.Scan(ctx, cursor, "*", 1000).Result()
		if err != nil {
			return "", err
		}
		for _, k := range keys {
			n, err := rs.Client.MemoryUsage(ctx, k, 0).Result()
			if err != nil {
				continue // gone since the scan
			}
			name := keyIDs.ReplaceAllString(k, "<id>")
			p := byName[name]
			if p == nil {
				typ, _ := rs.Client.Type(ctx, k).Result()
				enc, _ := rs.Client.ObjectEncoding(ctx, k).Result()
				p = &pattern{name: name, kind: typ + "/" + enc}
				byName[name] = p
			}
			p.bytes += n
			p.keys++
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	ps := make([]*pattern, 0, len(byName))
	for _, p := range byName {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].bytes > ps[j].bytes })
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%12d B %8d keys  %-20s %s\n", p.bytes, p.keys, p.kind, p.name)
	}
	return b.String(), nil
}

// logKeyBreakdown logs keyBreakdown under a title, if -storm-keys asked for it.
func (rs *redisServer) logKeyBreakdown(ctx context.Context, title string) {
	if !*stormKeys {
		return
	}
	text, err := rs.keyBreakdown(ctx)
	if err != nil {
		log.Printf("%s: key breakdown: %v", title, err)
		return
	}
	log.Printf("%s: Redis memory by key pattern (MEMORY USAGE):\n%s", title, text)
	if mem, err := rs.info(ctx, "memory"); err == nil {
		// What used_memory holds besides the keys: connections' buffers, scripts, the
		// append-only file's buffer, the keyspace's own tables.
		log.Printf("%s: used_memory %s = dataset %s + overhead %s (clients %s, scripts %s, AOF buffer %s)", title,
			mem["used_memory"], mem["used_memory_dataset"], mem["used_memory_overhead"],
			mem["mem_clients_normal"], mem["used_memory_scripts"], mem["mem_aof_buffer"])
	}
	if list, err := rs.Client.ClientList(ctx).Result(); err == nil {
		log.Printf("%s: clients' memory (CLIENT LIST: connections by name, tot-mem, query buffer qbuf+qbuf-free, output omem):\n%s", title, clientMemory(list))
	}
}

// clientMemory sums CLIENT LIST's per-connection memory by connection name.
func clientMemory(list string) string {
	type sum struct{ conns, tot, qbuf, qfree, omem int64 }
	by := map[string]*sum{}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		name := f["name"] + " " + f["cmd"]
		if by[name] == nil {
			by[name] = &sum{}
		}
		n := func(k string) int64 { v, _ := strconv.ParseInt(f[k], 10, 64); return v }
		s := by[name]
		s.conns++
		s.tot, s.qbuf, s.qfree, s.omem = s.tot+n("tot-mem"), s.qbuf+n("qbuf"), s.qfree+n("qbuf-free"), s.omem+n("omem")
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return by[names[i]].tot > by[names[j]].tot })
	var b strings.Builder
	for _, k := range names {
		s := by[k]
		fmt.Fprintf(&b, "%10d B %4d conns  qbuf %d + free %d, omem %d  %s\n", s.tot, s.conns, s.qbuf, s.qfree, s.omem, k)
	}
	return b.String()
}
