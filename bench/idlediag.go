package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An idle window's diagnosis: where the CPU of a window with nothing due goes, logged beside
// the figures (it is not a figure: it says why one is what it is). For Redis, the commands
// and scripts Herald sent (calls and microseconds each, from INFO commandstats) against what
// Redis spent of its own (active expiry's cycles, keys with a TTL, an append-only file rewrite
// or background save); for this process, the collector's cycles and their CPU, and the live
// heap each cycle marks. With -profile, the window has a CPU profile of its own,
// <scenario>.idle.pprof (the scenario's profile is mostly its loading, which says nothing
// about its idle CPU), and the heap the collector walks at its start,
// <scenario>.idle.heap.pprof; the rest of the scenario goes to <scenario>.after-idle.pprof.

// commandStat is one line of INFO commandstats.
type commandStat struct {
	calls int64
	usec  int64
}

// commandStats is INFO commandstats by command (cmdstat_ left off; a script's commands are
// counted under their own names too).
func (rs *redisServer) commandStats(ctx context.Context) (map[string]commandStat, error) {
	fields, err := rs.info(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	out := map[string]commandStat{}
	for k, v := range fields {
		f := subfields(v)
		calls, ok := f["calls"]
		if !ok {
			return nil, fmt.Errorf("INFO commandstats: %q", v)
		}
		out[strings.TrimPrefix(k, "cmdstat_")] = commandStat{calls: calls, usec: f["usec"]}
	}
	return out, nil
}

// subfields are the integer fields of an INFO value of the form a=1,b=2 (others left out).
func subfields(v string) map[string]int64 {
	out := map[string]int64{}
	for f := range strings.SplitSeq(v, ",") {
		name, val, _ := strings.Cut(f, "=")
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			out[name] = n
		}
	}
	return out
}

// commandRun is what Redis did of one command between two readings of INFO commandstats.
type commandRun struct {
	name        string
	calls, usec int64
}

// commandsSince is what Redis ran between readings before and after, the costliest first, and
// its total calls and microseconds.
func commandsSince(before, after map[string]commandStat) (rows []commandRun, calls, usec int64) {
	for name, s := range after {
		c, u := s.calls-before[name].calls, s.usec-before[name].usec
		if c > 0 {
			rows = append(rows, commandRun{name, c, u})
			calls, usec = calls+c, usec+u
		}
	}
	slices.SortFunc(rows, func(a, b commandRun) int { return cmp.Compare(b.usec, a.usec) })
	return rows, calls, usec
}

// redisMark is what Redis did on its own so far, and what it holds that its own cron walks.
type redisMark struct {
	commands       map[string]commandStat
	expiredKeys    int64 // keys active or lazy expiry removed
	expireCycleMs  int64 // CPU of the active expiry cycles
	keys, expiring int64 // keys of db 0, and those with a TTL
	rewrites       int64 // append-only file rewrites
	bgsaves        int64 // snapshots saved (rdb_saves; the bench's Redis has no save points)
}

func (rs *redisServer) mark(ctx context.Context) (redisMark, error) {
	var m redisMark
	var err error
	if m.commands, err = rs.commandStats(ctx); err != nil {
		return m, err
	}
	stats, err := rs.info(ctx, "stats")
	if err != nil {
		return m, err
	}
	m.expiredKeys, _ = strconv.ParseInt(stats["expired_keys"], 10, 64)
	m.expireCycleMs, _ = strconv.ParseInt(stats["expire_cycle_cpu_milliseconds"], 10, 64)
	ks, err := rs.info(ctx, "keyspace")
	if err != nil {
		return m, err
	}
	db := subfields(ks["db0"])
	m.keys, m.expiring = db["keys"], db["expires"]
	p, err := rs.info(ctx, "persistence")
	if err != nil {
		return m, err
	}
	m.rewrites, _ = strconv.ParseInt(p["aof_rewrites"], 10, 64)
	m.bgsaves, _ = strconv.ParseInt(p["rdb_saves"], 10, 64)
	return m, nil
}

// goMark is the Go runtime's garbage collection so far, and its heap.
type goMark struct {
	gcCPU    float64 // seconds of CPU the collector used (the runtime updates it at each cycle's end)
	cycles   uint64  // completed cycles
	liveHeap uint64  // bytes marked live by the last cycle
	goal     uint64  // the heap size at which the next cycle starts
}

func readGoMark() goMark {
	s := []metrics.Sample{
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/gc/cycles/total:gc-cycles"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/goal:bytes"},
	}
	metrics.Read(s)
	var m goMark
	if s[0].Value.Kind() == metrics.KindFloat64 {
		m.gcCPU = s[0].Value.Float64()
	}
	for i, p := range []*uint64{&m.cycles, &m.liveHeap, &m.goal} {
		if s[i+1].Value.Kind() == metrics.KindUint64 {
			*p = s[i+1].Value.Uint64()
		}
	}
	return m
}

// idleDiagnosis is the window's marks, taken at its start.
type idleDiagnosis struct {
	scenario string
	redis    redisMark
	goRT     goMark
	b        *bench
}

// startDiagnosis marks the start of scenario's idle window and, with -profile, switches the CPU
// profile to the window's own file and writes the heap profile.
func (b *bench) startDiagnosis(ctx context.Context, scenario string) (*idleDiagnosis, error) {
	d := &idleDiagnosis{scenario: scenario, b: b}
	if b.profileDir != "" {
		if err := b.profileTo(scenario + ".idle"); err != nil {
			return nil, err
		}
		// What the collector walks at each cycle: the heap as of the last one.
		h, err := os.Create(filepath.Join(b.profileDir, scenario+".idle.heap.pprof"))
		if err != nil {
			return nil, err
		}
		err = pprof.Lookup("heap").WriteTo(h, 0)
		if err := errors.Join(err, h.Close()); err != nil {
			return nil, err
		}
	}
	var err error
	d.redis, err = b.redis.mark(ctx)
	d.goRT = readGoMark()
	return d, err
}

// finish logs what the window cost, by command and by the collector, and with -profile
// profiles the rest of the scenario to <scenario>.after-idle.pprof.
func (d *idleDiagnosis) finish(ctx context.Context, elapsed time.Duration) {
	rs := d.b.redis
	g := readGoMark()
	if d.b.profileDir != "" {
		if err := d.b.profileTo(d.scenario + ".after-idle"); err != nil {
			log.Printf("%s: profile after the idle window: %v", d.scenario, err)
		}
	}
	r, err := rs.mark(ctx)
	if err != nil {
		log.Printf("%s: idle window diagnosis: %v", d.scenario, err)
		return
	}
	sec := elapsed.Seconds()
	rows, calls, usec := commandsSince(d.redis.commands, r.commands)
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s: idle window of %s: Redis ran %.0f commands/s taking %.2f%% of a core (%.1f µs each);",
		d.scenario, elapsed.Round(time.Millisecond), float64(calls)/sec, float64(usec)/1e4/sec, float64(usec)/float64(max(calls, 1)))
	for _, x := range rows[:min(len(rows), 12)] {
		fmt.Fprintf(&sb, " %s %.1f/s × %.1f µs;", x.name, float64(x.calls)/sec, float64(x.usec)/float64(x.calls))
	}
	fmt.Fprintf(&sb, " its own: active expiry %.2f%% of a core (%d keys expired) over %d keys, %d with a TTL; %d AOF rewrites, %d saves",
		float64(r.expireCycleMs-d.redis.expireCycleMs)/10/sec, r.expiredKeys-d.redis.expiredKeys, r.keys, r.expiring,
		r.rewrites-d.redis.rewrites, r.bgsaves-d.redis.bgsaves)
	log.Print(sb.String())
	log.Printf("%s: idle window, this process's garbage collection: %d cycles taking %.2f%% of a core; live heap %.0f MB, next cycle at %.0f MB",
		d.scenario, g.cycles-d.goRT.cycles, 100*(g.gcCPU-d.goRT.gcCPU)/sec, float64(g.liveHeap)/1e6, float64(g.goal)/1e6)
}

// settle waits, up to within, until redis-server is done with the housekeeping a load left
// it: no append-only file rewrite running or scheduled, and the threads that close files and
// free values in the background idle for a second. A rewrite of a million alerts' file
// ends by deleting the old gigabyte base file in the background, where the kernel frees
// its cached pages: seconds of CPU that a steady idle server never spends (with nothing
// written, its file does not grow to a rewrite) and that fell in scenario 4's idle window
// after its load, not counted as a rewrite there (INFO's aof_rewrites counts a rewrite when
// it starts). It says what it waited for ("" when nothing), and times out quietly: the
// window's diagnosis shows what remained.
func (rs *redisServer) settle(ctx context.Context, within time.Duration) string {
	start := time.Now()
	var waited []string
	last, quietSince := int64(-1), time.Now()
	done := false
	for time.Since(start) < within {
		p, err := rs.info(ctx, "persistence")
		if err != nil {
			return ""
		}
		busy := false
		if p["aof_rewrite_in_progress"] == "1" || p["aof_rewrite_scheduled"] == "1" {
			busy = true
			if !slices.Contains(waited, "a rewrite") {
				waited = append(waited, "a rewrite")
			}
		}
		bg := backgroundCPU(rs.pid())
		if bg != last {
			last, quietSince = bg, time.Now()
		}
		if done = !busy && time.Since(quietSince) >= time.Second; done {
			break
		}
		if time.Since(quietSince) < time.Second && time.Since(start) > time.Second && !slices.Contains(waited, "background threads") {
			waited = append(waited, "background threads")
		}
		if err := sleepUntil(ctx, time.Now().Add(100*time.Millisecond)); err != nil {
			return ""
		}
	}
	if len(waited) == 0 {
		return ""
	}
	s := fmt.Sprintf("%s for %s", strings.Join(waited, " and "), time.Since(start).Round(100*time.Millisecond))
	if !done {
		s += ", not done: the window starts anyway"
	}
	return s
}

// backgroundCPU is the CPU time (in clock ticks) so far of redis-server pid's threads that
// close files and free values in the background, from /proc (0 where unreadable).
func backgroundCPU(pid int) int64 {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var ticks int64
	for _, t := range tasks {
		comm, err := os.ReadFile(filepath.Join(dir, t.Name(), "comm"))
		if name := strings.TrimSpace(string(comm)); err != nil || (name != "bio_close_file" && name != "bio_lazy_free") {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state is the first, utime and
		// stime the 12th and 13th.
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return ticks
}
