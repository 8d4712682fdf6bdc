// Command herald runs Herald: the API, and (in later roles) the workers and the scheduler,
// or all of it in one process for a first look (herald dev). This package only wires: it reads
// the configuration, builds the parts and starts them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `herald: a notification dispatcher for monitoring platforms.

To try it: herald dev (nothing else to install; it prints a key and a curl line).

Usage:
  herald dev        everything in one process; embedded store unless HERALD_REDIS_URL is set
  herald api        the HTTP API
  herald worker     the alert engine and senders; run as many as the load needs
  herald scheduler  periodic work: schedule repair, retention; run two, one leads
  herald admin ...  create organizations, projects and API keys on a deployment
  herald version    print the build's version and git hash (also --version)

Every role but dev needs a Redis: HERALD_REDIS_URL, HERALD_REDIS_SENTINELS with
HERALD_REDIS_MASTER, or HERALD_REDIS_CLUSTER. Run 'herald ROLE --help' for the settings of a
role. Every flag can also be set by the HERALD_* environment variable named in its help.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	useRedisLog(nil)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp): // help asked for and given
	case errors.Is(err, errNoRole): // the usage is printed
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "herald:", err)
		os.Exit(2)
	}
}

// errNoRole is herald run without a role: the usage is printed, and herald exits 2.
var errNoRole = errors.New("no role given")

// run dispatches to a role. out is where a role prints what a person must read (a new key);
// logs go to errOut.
func run(ctx context.Context, args []string, out, errOut io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(errOut, usage)
		return errNoRole
	}
	switch role, rest := args[0], args[1:]; role {
	case "dev":
		return runDev(ctx, rest, out, errOut)
	case "api":
		return runAPI(ctx, rest, out, errOut)
	case "worker":
		return runWorker(ctx, rest, out, errOut)
	case "scheduler":
		return runScheduler(ctx, rest, out, errOut)
	case "admin":
		return runAdmin(ctx, rest, out, errOut)
	case "version", "-version", "--version":
		fmt.Fprintf(out, "herald %s (git %s)\n", buildVersion(), buildGitHash())
		return nil
	case "-h", "-help", "--help", "help":
		fmt.Fprint(out, usage)
		return nil
	default:
		fmt.Fprint(errOut, usage)
		return fmt.Errorf("unknown role %q", role)
	}
}
