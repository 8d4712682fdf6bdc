package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/internal/testkit"
)

// The monitoring of Herald itself that deploy/ ships: the Grafana dashboard, the scrape
// configuration and the alerting rules, checked against a real Prometheus scraping herald dev.

var (
	dashboardFile = filepath.Join("..", "..", "deploy", "grafana", "herald.json")
	scrapeFile    = filepath.Join("..", "..", "deploy", "prometheus", "scrape.yml")
	rulesFile     = filepath.Join("..", "..", "deploy", "prometheus", "herald-rules.yml")
)

// promSeries are the series Prometheus makes itself for every target, which Herald does not
// export but the dashboard and rules may read.
var promSeries = []string{"up", "scrape_duration_seconds"}

// mayBeEmpty are the selectors and the panels' expressions that return no data from a healthy
// Herald after the storm, and why. Everything else must return data.
var mayBeEmpty = map[string]string{
	`herald_api_requests_total{code=~"5.."}`: "a healthy API answers no 5xx",
	`sum by (instance) (rate(herald_api_requests_total{code=~"5.."}[30s])) / sum by (instance) (rate(herald_api_requests_total[30s]))`: "a ratio of 5xx, which a healthy API does not answer",
}

// promExpr is an expression of the dashboard or the rules, and where it is.
type promExpr struct{ where, expr string }

// dashboardExprs are the expressions of every panel's targets, with Grafana's variables
// substituted as a 1 s scrape needs them.
func dashboardExprs(t *testing.T) []promExpr {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	type panel struct {
		Type, Title string
		Datasource  struct{ Type, UID string }
		Targets     []struct{ Expr, RefID string }
		Panels      []json.RawMessage
	}
	var d struct {
		SchemaVersion int
		Templating    struct {
			List []struct{ Name, Type, Query string }
		}
		Panels []panel
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.SchemaVersion < 39 {
		t.Errorf("schemaVersion %d: not a current Grafana's", d.SchemaVersion)
	}
	if len(d.Templating.List) != 1 || d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Errorf("the dashboard's variables are %+v, want one Prometheus datasource variable", d.Templating.List)
	}
	var out []promExpr
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Type != "timeseries" && p.Type != "stat" {
			t.Errorf("panel %q is a %s: only Grafana's own timeseries and stat panels are used", p.Title, p.Type)
		}
		if p.Datasource.Type != "prometheus" || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q reads %+v, not the datasource variable", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no target", p.Title)
		}
		for _, target := range p.Targets {
			expr := strings.ReplaceAll(target.Expr, "$__rate_interval", "30s")
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q %s: a variable the test does not know: %s", p.Title, target.RefID, target.Expr)
			}
			out = append(out, promExpr{fmt.Sprintf("panel %q %s", p.Title, target.RefID), expr})
		}
	}
	return out
}

// rule is an alerting rule of the rules file.
type rule struct {
	Alert, Expr, For string
	Labels           map[string]string
	Annotations      map[string]string
}

func readRules(t *testing.T) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Name  string
			Rules []rule
		}
	}
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// selector is a vector or matrix selector of an expression: a metric name and its matchers as
// written ("" when none).
type selector struct{ name, matchers string }

func (s selector) String() string { return s.name + s.matchers }

// promKeywords are the words of PromQL that are neither functions nor metric names.
var promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}

// aggregationModifier is what follows an aggregation's name when its grouping comes first.
var aggregationModifier = regexp.MustCompile(`^(by|without)\s*\(`)

// selectors are the metric selectors of a PromQL expression: every identifier that is not a
// function or an aggregation (followed by "("), a keyword, a label list (after by, without,
// on, ignoring, group_left, group_right), a string, a number or a duration.
func selectors(expr string) []selector {
	var out []selector
	isIdent := func(c byte, first bool) bool {
		return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || !first && c >= '0' && c <= '9'
	}
	// skipTo is the index after the closing byte of what opens at i, skipping strings.
	skipTo := func(i int, closing byte) int {
		for i++; i < len(expr) && expr[i] != closing; i++ {
			if expr[i] == '"' || expr[i] == '\'' {
				q := expr[i]
				for i++; i < len(expr) && expr[i] != q; i++ {
					if expr[i] == '\\' {
						i++
					}
				}
			}
		}
		return i + 1
	}
	skipSpace := func(i int) int {
		for i < len(expr) && (expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n') {
			i++
		}
		return i
	}
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'':
			i = skipTo(i, c)
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i], false) || expr[i] == '.') {
				i++
			}
		case isIdent(c, true):
			start := i
			for i < len(expr) && isIdent(expr[i], false) {
				i++
			}
			word := expr[start:i]
			next := skipSpace(i)
			switch {
			case slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, word):
				if next < len(expr) && expr[next] == '(' {
					i = skipTo(next, ')')
				}
			case slices.Contains(promKeywords, strings.ToLower(word)):
			case next < len(expr) && expr[next] == '(':
			case aggregationModifier.MatchString(expr[next:]): // sum by (...) (...)
			case next < len(expr) && expr[next] == '{':
				i = skipTo(next, '}')
				out = append(out, selector{word, expr[next:i]})
			default:
				out = append(out, selector{word, ""})
			}
		default:
			i++
		}
	}
	return out
}

func TestSelectors(t *testing.T) {
	for expr, want := range map[string]string{
		`sum by (kind, le) (rate(herald_x_bucket{kind="WEBHOOK", a=~"b|c"}[5m])) > 0.5`:                  `herald_x_bucket{kind="WEBHOOK", a=~"b|c"}`,
		`up{job=~"a|b"} == 1 unless on (job, instance) count by (job, instance) (herald_q)`:              `up{job=~"a|b"} herald_q`,
		`histogram_quantile(0.99, sum(rate(a_b[30s])) without (le)) offset 1h > bool 1e3`:                `a_b`,
		`absent(up{job="x}{"} == 1) and on () sum(rate(d{job="w"}[10m] offset 5m)) == 0`:                 `up{job="x}{"} d{job="w"}`,
		`max by (queue) (delta(herald_queue_size{state="archived"}[15m])) / ignoring(x) group_left(y) z`: `herald_queue_size{state="archived"} z`,
	} {
		var got []string
		for _, s := range selectors(expr) {
			got = append(got, s.String())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("selectors(%s) = %q, want %q", expr, got, want)
		}
	}
}

// exportedNames are the names of the series of an exposition: a histogram's _bucket, _sum
// and _count, a summary's _sum and _count and its own.
func exportedNames(t *testing.T, metricsURL string) map[string]bool {
	t.Helper()
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for name, f := range families {
		names[name] = true
		switch f.GetType().String() {
		case "HISTOGRAM":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "SUMMARY":
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	return names
}

// promQuery is a running Prometheus' query API.
type promQuery string

// samples is how many series expr returns now, or Prometheus' error.
func (p promQuery) samples(expr string) (int, error) {
	resp, err := http.Get(string(p) + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var r struct {
		Status, Error string
		Data          struct{ Result []json.RawMessage }
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("%s: %s", resp.Status, b)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("prometheus refused it: %s", r.Error)
	}
	return len(r.Data.Result), nil
}

// startPrometheusOn runs Prometheus with scrape.yml's jobs, each scraping only target every
// second, and the rules file loaded; it answers the query API's address.
func startPrometheusOn(t *testing.T, prometheus, target string) promQuery {
	t.Helper()
	b, err := os.ReadFile(scrapeFile)
	if err != nil {
		t.Fatal(err)
	}
	var config map[string]any
	if err := yaml.Unmarshal(b, &config); err != nil {
		t.Fatal(err)
	}
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	config["global"] = map[string]any{"scrape_interval": "1s", "evaluation_interval": "1s"}
	config["rule_files"] = []string{rules}
	jobs, _ := config["scrape_configs"].([]any)
	var names []string
	for _, j := range jobs {
		job := j.(map[string]any)
		names = append(names, job["job_name"].(string))
		job["static_configs"] = []any{map[string]any{"targets": []string{target}}}
	}
	if !slices.Equal(names, []string{"herald-api", "herald-worker", "herald-scheduler"}) {
		t.Fatalf("scrape.yml's jobs are %v, not the ones the rules and the dashboard read", names)
	}
	dir := t.TempDir()
	out, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), out, 0o600); err != nil {
		t.Fatal(err)
	}
	addr := testkit.FreeLoopbackAddr(t)
	runPrometheus(t, prometheus, dir, addr)
	return promQuery("http://" + addr)
}

// answering serves status to every request.
func answering(t *testing.T, status int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook"
}

// The dashboard's and the rules' expressions against a real Prometheus scraping herald dev
// after a small storm (alerts delivered to one webhook, retried at one answering 503 and dead
// letters at one answering 400, and an API request answered 404): promtool accepts the rules
// and the scrape configuration; every metric an expression names is one Herald exports (or
// Prometheus' own up and scrape_duration_seconds); every selector as written, and every
// panel's expression, returns data (except mayBeEmpty's); every rule evaluates without error,
// and the dead letters' rule sees the storm's.
func TestDashboardAndRulesAgainstHerald(t *testing.T) {
	promtool := requireProgram(t, "/usr/bin/promtool")
	prometheus := requireProgram(t, "/usr/bin/prometheus")
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"check", "config", scrapeFile}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	exprs := dashboardExprs(t)
	rules := readRules(t)
	for _, r := range rules {
		if r.Alert == "" || r.For == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("rule %q needs an alert name, for:, a severity label, and summary and description annotations", r.Alert)
		}
	}

	h := startPromHerald(t)
	prom := startPrometheusOn(t, prometheus, h.addr)
	// The storm starts once Prometheus has scraped the queues' gauges: the dead letters' rule
	// watches them rise.
	waitFor(t, 60*time.Second, "Prometheus to scrape herald dev", func() (bool, string) {
		n, err := prom.samples(`herald_queue_size{job="herald-scheduler"}`)
		return err == nil && n > 0, fmt.Sprint(n, err)
	})
	h.api.call(t, "POST", "/groups/"+h.project+"/alertConfigs", map[string]any{"eventTypeName": herald.EventTypePrometheusAlert, "enabled": true,
		"notifications": []any{
			map[string]any{"typeName": "WEBHOOK", "webhookUrl": answering(t, http.StatusServiceUnavailable), "delayMin": 0, "intervalMin": 60},
			map[string]any{"typeName": "WEBHOOK", "webhookUrl": answering(t, http.StatusBadRequest), "delayMin": 0, "intervalMin": 60},
		}}, http.StatusCreated, nil)
	var storm []map[string]any
	for i := range 3 {
		storm = append(storm, map[string]any{"labels": map[string]string{"alertname": "Storm", "instance": fmt.Sprint("host-", i)},
			"startsAt": time.Now().UTC().Format(time.RFC3339)})
	}
	body, _ := json.Marshal(storm)
	req, _ := http.NewRequest("POST", h.door+"/api/v2/alerts", bytes.NewReader(body))
	req.SetBasicAuth(h.publicKey, h.privateKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("posting the storm: %s", resp.Status)
	}
	h.api.call(t, "GET", "/groups/"+h.project+"/alerts/0123456789abcdef01234567", nil, http.StatusNotFound, nil)

	for _, want := range []string{
		`sum(herald_deliveries_total{outcome="delivered"}) > 0`,
		`sum(herald_deliveries_total{outcome="retrying"}) > 0`,
		`max(herald_queue_size{state="archived"}) > 0`,
	} {
		waitFor(t, 60*time.Second, "Prometheus to see the storm: "+want, func() (bool, string) {
			n, err := prom.samples(want)
			return err == nil && n > 0, fmt.Sprint(n, err, "\n", h.hooks)
		})
	}

	exported := exportedNames(t, "http://"+h.addr+"/metrics")
	for _, name := range promSeries {
		exported[name] = true
	}
	for _, r := range rules {
		exprs = append(exprs, promExpr{fmt.Sprintf("rule %s", r.Alert), r.Expr})
	}
	// Rates need two scrapes within their window: what must return data is polled for until
	// the deadline; what may be empty (a rule's expression, while it does not fire) is asked
	// once, after everything else.
	deadline := time.Now().Add(30 * time.Second)
	type query struct {
		where, expr string
		mustHave    bool
	}
	var queries, later []query
	for _, e := range exprs {
		sels := selectors(e.expr)
		if len(sels) == 0 {
			t.Errorf("%s names no metric: %s", e.where, e.expr)
		}
		for _, s := range sels {
			if !exported[s.name] {
				t.Errorf("%s names %s, which Herald does not export: %s", e.where, s.name, e.expr)
			}
			queries = append(queries, query{e.where + ": " + s.String(), s.String(), mayBeEmpty[s.String()] == ""})
		}
		queries = append(queries, query{e.where, e.expr, strings.HasPrefix(e.where, "panel") && mayBeEmpty[e.expr] == ""})
	}
	for allowed := range mayBeEmpty {
		if !slices.ContainsFunc(queries, func(q query) bool { return q.expr == allowed }) {
			t.Errorf("mayBeEmpty names %s, which neither the dashboard nor the rules read", allowed)
		}
	}
	for _, q := range queries {
		if !q.mustHave {
			later = append(later, q)
			continue
		}
		for {
			n, err := prom.samples(q.expr)
			if err != nil {
				t.Errorf("%s: %v: %s", q.where, err, q.expr)
			} else if n == 0 && time.Now().Before(deadline) {
				time.Sleep(200 * time.Millisecond)
				continue
			} else if n == 0 {
				t.Errorf("%s returns no data after the storm: %s", q.where, q.expr)
			}
			break
		}
	}
	for _, q := range later {
		if _, err := prom.samples(q.expr); err != nil {
			t.Errorf("%s: %v: %s", q.where, err, q.expr)
		}
	}

	// Every rule has been evaluated without error, and the storm's dead letters set off the
	// rule that watches them (pending for its for:, or firing).
	waitFor(t, 30*time.Second, "every rule to be evaluated, the dead letters' pending or firing", func() (bool, string) {
		resp, err := http.Get(string(prom) + "/api/v1/rules?type=alert")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Groups []struct {
					Rules []struct{ Name, Health, LastError, State string }
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return false, err.Error()
		}
		var state []string
		ok, n := true, 0
		for _, g := range r.Data.Groups {
			for _, rule := range g.Rules {
				n++
				state = append(state, fmt.Sprintf("%s %s %s %s", rule.Name, rule.Health, rule.State, rule.LastError))
				ok = ok && rule.Health == "ok" && (rule.Name != "HeraldDeadLettersRising" || rule.State != "inactive")
			}
		}
		return ok && n == len(rules), strings.Join(state, "\n")
	})
}
