package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/heraldhq/herald"
)

// sizes are how much each measurement does.
type sizes struct {
	Tasks        int           // raw asynq no-op tasks
	Opened       int           // scenario 1: alerts opened by observations
	Due          int           // scenario 2: first notices falling due
	DueWindow    time.Duration // scenario 2: the window their observations come in
	Waiting      int           // scenario 3: open alerts waiting for a repeat
	IdleWindow   time.Duration // scenarios 3 and 4: how long CPU is measured with nothing due
	Million      int           // scenario 4: open alerts held, repeats pending
	MillionSlice int           // scenario 4: alerts whose repeats fall due together
	Storms       intList       // scenario 5: alerts in each storm, through Alertmanager and Herald
	StormRounds  int           // scenario 5: rounds of each storm size (Alertmanager, then Herald, each round)
	Batch        int           // observations a request
	Concurrency  int           // tasks a worker runs at once, Herald's and raw asynq's
	ReadFor      time.Duration // scenario 7: how long each server is loaded with reads
	ReadRounds   int           // scenario 7: rounds (the plain handler, then Herald, each round)
	IngestFor    time.Duration // scenario 8: how long observations are posted
	Heartbeats   int           // scenario 10: heartbeats pinged once a minute
	HBMinute     time.Duration // scenario 10: Herald's minute (HERALD_MINUTE)
	HBMissRounds int           // scenario 10: minutes in which a new 1% of the heartbeats go silent
}

var (
	fullSizes = sizes{Tasks: 20_000, Opened: 10_000, Due: 20_000, DueWindow: 10 * time.Second,
		Waiting: 100_000, IdleWindow: 10 * time.Second, Million: 1_000_000, MillionSlice: 10_000, Storms: intList{10_000, 100_000}, StormRounds: 3,
		Batch: 500, Concurrency: 20, ReadFor: 10 * time.Second, ReadRounds: 3, IngestFor: 20 * time.Second,
		Heartbeats: 100_000, HBMinute: time.Minute, HBMissRounds: 3}
	quickSizes = sizes{Tasks: 4_000, Opened: 2_000, Due: 4_000, DueWindow: 4 * time.Second,
		Waiting: 10_000, IdleWindow: 3 * time.Second, Million: 20_000, MillionSlice: 2_000, Storms: intList{2_000, 10_000}, StormRounds: 1,
		Batch: 500, Concurrency: 20, ReadFor: 3 * time.Second, ReadRounds: 1, IngestFor: 5 * time.Second,
		Heartbeats: 5_000, HBMinute: 5 * time.Second, HBMissRounds: 2}
)

// bench is one run: its Redis, its sizes, and the raw asynq rate scenario 1 is judged by.
type bench struct {
	redis      *redisServer
	sizes      sizes
	profileDir string
	profiling  *os.File // the CPU profile being written (profileTo)
	asynqRate  float64  // raw asynq no-op tasks per second
	quick      bool     // -quick: scenarios without a size of their own in sizes scale down
}

// scenario is one of Herald's measurements; name also names its CPU profile.
type scenario struct {
	title, name string
	run         func(context.Context) ([]figure, error)
}

// onlyScenarios names the scenarios to run, when not all of them.
var onlyScenarios = flag.String("only", "", "run only these scenarios, comma-separated names: opened, due, waiting, million, storm, prometheus, apiread, ingest, people, heartbeats")

// pickScenarios is the scenarios that names (comma-separated) lists, in the run's order.
func pickScenarios(all []scenario, names string) ([]scenario, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if !slices.ContainsFunc(all, func(s scenario) bool { return s.name == n }) {
			return nil, fmt.Errorf("-only: no scenario named %q", n)
		}
		want[n] = true
	}
	return slices.DeleteFunc(slices.Clone(all), func(s scenario) bool { return !want[s.name] }), nil
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("bench: ")
	if addr := os.Getenv(plainServerEnv); addr != "" { // started by the API read scenario
		if err := servePlain(addr, os.Getenv(plainAlertEnv)); err != nil {
			log.Fatal(err)
		}
		return
	}
	sz, profileDir, timeout := parseFlags()
	os.Exit(run(sz, profileDir, timeout))
}

// Exit statuses besides 0 (every target met) and 2 (bad flags).
const (
	exitFailed = 1 // the run could not measure
	exitMissed = 3 // a target was missed
)

// run measures, prints the report, and says how the benchmark exits.
func run(sz sizes, profileDir string, timeout time.Duration) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer removeBuiltHerald() // after the processes it ran have stopped (measure stops them)
	rep, err := measure(ctx, sz, profileDir)
	if err != nil {
		log.Print(err)
		return exitFailed
	}
	if err := rep.writePlain(os.Stdout); err != nil {
		log.Print(err)
		return exitFailed
	}
	fmt.Println()
	if err := rep.writeMarkdown(os.Stdout); err != nil {
		log.Print(err)
		return exitFailed
	}
	if rep.missed() {
		return exitMissed
	}
	return 0
}

var quickRun = flag.Bool("quick", false, "reduced sizes, for a smoke run of about a minute")

// parseFlags reads the sizes (the full run's, or -quick's, with any size given on the command
// line instead), where to write profiles, and the bound of the whole run.
func parseFlags() (sizes, string, time.Duration) {
	sz := fullSizes
	quick := quickRun
	flag.IntVar(&sz.Tasks, "tasks", sz.Tasks, "raw asynq no-op tasks")
	flag.IntVar(&sz.Opened, "opened", sz.Opened, "scenario 1: alerts opened by observations, first notice at once")
	flag.IntVar(&sz.Due, "due", sz.Due, "scenario 2: first notices falling due")
	flag.DurationVar(&sz.DueWindow, "due-window", sz.DueWindow, "scenario 2: the window the observations (and so the due times) are spread over")
	flag.IntVar(&sz.Waiting, "waiting", sz.Waiting, "scenario 3: open alerts waiting for their next repeat")
	flag.DurationVar(&sz.IdleWindow, "idle-window", sz.IdleWindow, "scenarios 3 and 4: how long CPU is measured with nothing due")
	flag.IntVar(&sz.Million, "million", sz.Million, "scenario 4: open alerts held with their repeats pending (1,000,000 takes a few minutes)")
	flag.IntVar(&sz.MillionSlice, "million-slice", sz.MillionSlice, "scenario 4: alerts whose repeats fall due together")
	flag.Var(&sz.Storms, "storms", "scenario 5: alerts in each storm, comma-separated")
	flag.IntVar(&sz.StormRounds, "storm-rounds", sz.StormRounds, "scenario 5: rounds of each storm size, each through Alertmanager and then Herald; the ratio and rates are the median round's, what else has a target the worst round's")
	flag.IntVar(&sz.Batch, "batch", sz.Batch, "observations a request")
	flag.DurationVar(&sz.ReadFor, "read-for", sz.ReadFor, "scenario 7: how long each server is loaded with reads, each round")
	flag.IntVar(&sz.ReadRounds, "read-rounds", sz.ReadRounds, "scenario 7: rounds, each loading the plain handler and then Herald; the ratio and rates are the median round's, p99 and CPU a request the worst round's")
	flag.DurationVar(&sz.IngestFor, "ingest-for", sz.IngestFor, "scenario 5: how long observations are posted")
	flag.IntVar(&sz.Heartbeats, "heartbeats", sz.Heartbeats, "scenario 10: heartbeats, each pinged once a minute")
	flag.DurationVar(&sz.HBMinute, "heartbeat-minute", sz.HBMinute, "scenario 10: Herald's minute (HERALD_MINUTE): the heartbeats' period and grace, and how often each is pinged")
	flag.IntVar(&sz.HBMissRounds, "heartbeat-miss-minutes", sz.HBMissRounds, "scenario 10: minutes in which a new 1% of the heartbeats go silent")
	flag.IntVar(&sz.Concurrency, "concurrency", sz.Concurrency, "tasks a worker runs at once (Herald's and raw asynq's)")
	profileDir := flag.String("profile", "", "write a CPU profile of each scenario to `dir`/<scenario>.pprof (its idle window, if any, to <scenario>.idle.pprof, with the heap then in <scenario>.idle.heap.pprof), and of each Herald process it starts to `dir`/<process>.<n>.pprof")
	timeout := flag.Duration("timeout", 20*time.Minute, "bound of the whole run")
	flag.Parse()
	if *quick {
		// The flags point into sz: take the quick sizes, then what the command line said again.
		given := map[string]string{}
		flag.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
		sz = quickSizes
		for name, v := range given {
			_ = flag.Set(name, v)
		}
	}
	if min(sz.Tasks, sz.Opened, sz.Due, sz.Waiting, sz.Million, sz.MillionSlice, sz.Concurrency, sz.StormRounds, sz.ReadRounds, slices.Min(append(sz.Storms, 1)), sz.Heartbeats, sz.HBMissRounds) < 1 ||
		min(sz.ReadFor, sz.IngestFor) <= 0 || sz.HBMinute < 100*time.Millisecond || sz.Batch < 1 || sz.Batch > herald.MaxObservationsPerRequest {
		fmt.Fprintf(os.Stderr, "bench: sizes and -concurrency must be at least 1, -batch at most %d\n", herald.MaxObservationsPerRequest)
		os.Exit(2)
	}
	return sz, *profileDir, *timeout
}

// measure starts redis-server, measures the raw asynq rate, runs the scenarios, and stops
// redis-server. A scenario that fails is reported as missing its targets; the run goes on.
func measure(ctx context.Context, sz sizes, profileDir string) (*report, error) {
	rs, err := startRedis(ctx)
	if err != nil {
		return nil, err
	}
	defer rs.stop()
	b := &bench{redis: rs, sizes: sz, profileDir: profileDir, quick: *quickRun}
	if profileDir != "" {
		abs, err := filepath.Abs(profileDir)
		if err != nil {
			return nil, err
		}
		childProfiles.dir = abs
	}
	rep := &report{Command: strings.Join(append([]string{"go run ./bench"}, os.Args[1:]...), " ")}
	if rep.Setup, err = b.setup(ctx); err != nil {
		return nil, err
	}
	scenarios := []scenario{
		{"1. alerts opened", "opened", b.opened},
		{"2. first notices due", "due", b.due},
		{"3. open alerts waiting", "waiting", b.waiting},
		{"4. a million open alerts", "million", b.million},
		{"5. alert storms against Alertmanager", "storm", b.storm},
		{"6. Prometheus re-sends", "prometheus", b.prometheus},
		{"7. API reads with Digest", "apiread", b.apiRead},
		{"8. observations ingested", "ingest", b.ingest},
		{"9. storm for people", "people", b.people},
		{"10. heartbeats", "heartbeats", b.heartbeats},
	}
	if *onlyScenarios != "" {
		if scenarios, err = pickScenarios(scenarios, *onlyScenarios); err != nil {
			return nil, err
		}
	}
	if *scaleOnly {
		scenarios = []scenario{{"workers: two against one", "workers", b.workers}}
	}
	// Only scenario 1 is judged against the raw asynq rate.
	if slices.ContainsFunc(scenarios, func(s scenario) bool { return s.name == "opened" }) {
		log.Printf("raw asynq: %d no-op tasks, concurrency %d", sz.Tasks, sz.Concurrency)
		if b.asynqRate, err = asynqCeiling(ctx, rs.Client, sz.Tasks, sz.Concurrency); err != nil {
			return nil, fmt.Errorf("raw asynq rate: %w", err)
		}
		rep.add(figure{Name: "raw asynq no-op tasks/s (the ceiling)", Value: fmt.Sprintf("%.0f /s (%d tasks)", b.asynqRate, sz.Tasks)})
	}
	for _, s := range scenarios {
		figs, err := b.runScenario(ctx, s)
		if ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		if err != nil {
			log.Printf("%s: %v", s.title, err)
			figs = []figure{{Name: s.title, Value: "did not complete: " + err.Error(), Result: miss}}
		}
		rep.add(figs...)
	}
	return rep, nil
}

// setup describes what the run runs on.
func (b *bench) setup(ctx context.Context) (string, error) {
	v, err := b.redis.version(ctx)
	return fmt.Sprintf("%d cores, %s, redis-server %s (AOF everysec, unix socket), worker concurrency %d",
		runtime.NumCPU(), runtime.Version(), v, b.sizes.Concurrency), err
}

// runScenario runs s on an empty Redis, under a CPU profile when asked.
func (b *bench) runScenario(ctx context.Context, s scenario) ([]figure, error) {
	if err := b.redis.flush(ctx); err != nil {
		return nil, err
	}
	disk := b.redis.diskStalls(ctx)
	defer func() { disk.report(ctx, s.name) }()
	if err := b.profileTo(s.name); err != nil {
		return nil, err
	}
	defer func() { _ = b.profileTo("") }()
	return s.run(ctx)
}

// profileTo ends the CPU profile under way, if any, and with -profile starts one written to
// <dir>/<name>.pprof (none: name ""). A scenario's idle window has its own
// (<scenario>.idle.pprof), and what comes after it in the scenario goes to
// <scenario>.after-idle.pprof.
func (b *bench) profileTo(name string) error {
	if b.profiling != nil {
		pprof.StopCPUProfile()
		err := b.profiling.Close()
		b.profiling = nil
		if err != nil {
			return err
		}
	}
	if b.profileDir == "" || name == "" {
		return nil
	}
	if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(b.profileDir, name+".pprof"))
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	b.profiling = f
	return nil
}

// startRig starts Herald for a scenario, with this run's worker concurrency.
func (b *bench) startRig(ctx context.Context, minute time.Duration, n webhookNotification) (*rig, error) {
	return startRig(ctx, b.redis.Client, minute, b.sizes.Concurrency, n)
}

// intList is a flag of comma-separated counts.
type intList []int

func (l *intList) String() string {
	s := make([]string, len(*l))
	for i, n := range *l {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out intList
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		out = append(out, n)
	}
	*l = out
	return nil
}
