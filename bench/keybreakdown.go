package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"regexp"
	"sort"
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
}
