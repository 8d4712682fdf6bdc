package store

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
)

// infoSections are the INFO sections the embedded server answers itself; miniredis answers
// only "clients" and "stats", so asynqmon's Redis page, which reads redis_version,
// uptime_in_days, used_memory_human, rdb_last_save_time and the like, showed "undefined days"
// and "NaNhNaNmNaNs ago" on herald dev.
var infoSections = []string{"server", "clients", "memory", "persistence", "stats", "replication"}

// answerInfo makes srv answer INFO (all sections, or one of infoSections) with the fields a
// real Redis reports, as far as an in-process store has them: the version it emulates, its
// uptime, its clients, the process's heap as its memory (the store lives in the process), and
// no persistence (nothing is ever saved; the last save is the start). Other sections are left
// to miniredis.
func answerInfo(srv *miniredis.Miniredis, started time.Time) {
	srv.Server().SetPreHook(func(c *server.Peer, cmd string, args ...string) bool {
		if cmd != "INFO" || len(args) > 1 {
			return false
		}
		sections := infoSections
		if len(args) == 1 {
			switch a := strings.ToLower(args[0]); a {
			case "all", "everything", "default":
			default:
				if !slices.Contains(infoSections, a) {
					return false
				}
				sections = []string{a}
			}
		}
		c.WriteBulk(embeddedInfo(srv, started, time.Now(), sections))
		return true
	})
}

// embeddedInfo is the INFO text of the given sections at now.
func embeddedInfo(srv *miniredis.Miniredis, started, now time.Time, sections []string) string {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	up := now.Sub(started)
	var b strings.Builder
	for _, s := range sections {
		switch s {
		case "server":
			fmt.Fprintf(&b, "# Server\r\nredis_version:7.2.0\r\nredis_mode:standalone\r\nherald_embedded:miniredis\r\n"+
				"uptime_in_seconds:%d\r\nuptime_in_days:%d\r\n", int64(up.Seconds()), int64(up.Hours()/24))
		case "clients":
			fmt.Fprintf(&b, "# Clients\r\nconnected_clients:%d\r\n", srv.Server().ClientsLen())
		case "memory":
			fmt.Fprintf(&b, "# Memory\r\nused_memory:%d\r\nused_memory_human:%s\r\nused_memory_peak:%d\r\nused_memory_peak_human:%s\r\n"+
				"mem_fragmentation_ratio:1.00\r\n", ms.HeapAlloc, humanBytes(ms.HeapAlloc), ms.HeapSys, humanBytes(ms.HeapSys))
		case "persistence":
			fmt.Fprintf(&b, "# Persistence\r\nloading:0\r\nrdb_changes_since_last_save:0\r\nrdb_last_save_time:%d\r\naof_enabled:0\r\n", started.Unix())
		case "stats":
			fmt.Fprintf(&b, "# Stats\r\ntotal_connections_received:%d\r\ntotal_commands_processed:%d\r\n",
				srv.Server().TotalConnections(), srv.Server().TotalCommands())
		case "replication":
			b.WriteString("# Replication\r\nrole:master\r\nconnected_slaves:0\r\n")
		}
		b.WriteString("\r\n")
	}
	return b.String()
}

// humanBytes writes n as Redis's *_human fields do: 1.50M, 812.00K.
func humanBytes(n uint64) string {
	switch f := float64(n); {
	case f >= 1<<30:
		return fmt.Sprintf("%.2fG", f/(1<<30))
	case f >= 1<<20:
		return fmt.Sprintf("%.2fM", f/(1<<20))
	case f >= 1<<10:
		return fmt.Sprintf("%.2fK", f/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
