// Package deploy holds Herald's deploy files: the image's build script and Dockerfile, the
// compose file, the Kubernetes manifests and the systemd units. Its tests check each the way
// the tool that reads it would (buildah and the image's own binary, Kubernetes' own types,
// systemd-analyze), plus what Herald needs of them: the roles, the
// settings' names, probes, resources, and grace periods that cover Herald's drain on SIGTERM.
package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/heraldhq/herald/channels/registry"
	"github.com/heraldhq/herald/dispatch"
	"github.com/heraldhq/herald/internal/testkit"
)

// drainSeconds is the longest Herald takes to stop after SIGTERM: the API drains requests for
// up to 30 s (cmd/herald serveAPI), a worker finishes its tasks for up to 25 s. Every grace
// period before a SIGKILL must cover it.
const drainSeconds = 30

// roles are the herald commands a deployment runs.
var roles = []string{"api", "worker", "scheduler"}

// listens says where each role serves /healthz and /readyz in a container: the setting of its
// address, and the port the probes and healthchecks ask. The API serves them on its own port,
// a worker and a scheduler beside their /metrics.
var listens = map[string]struct {
	setting string
	port    int32
}{
	"api":       {"HERALD_LISTEN", 8080},
	"worker":    {"HERALD_METRICS_LISTEN", 9090},
	"scheduler": {"HERALD_METRICS_LISTEN", 9091},
}

// The ports above are the roles' own defaults, so that the deployments, the units and a
// worker and a scheduler started by hand on one host agree.
func TestListensAreTheDefaults(t *testing.T) {
	src := string(heraldSource(t))
	for role, name := range map[string]string{"worker": "workerMetricsListen", "scheduler": "schedulerMetricsListen"} {
		m := regexp.MustCompile(name + `\s*=\s*":(\d+)"`).FindStringSubmatch(src)
		if m == nil || m[1] != fmt.Sprint(listens[role].port) {
			t.Errorf("%s: the binary's default metrics port is %v, the deployments use %d", role, m, listens[role].port)
		}
	}
}

// heraldSource is the source of the herald binary, cmd/herald without its tests.
func heraldSource(t *testing.T) []byte {
	t.Helper()
	files, err := filepath.Glob("../cmd/herald/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in ../cmd/herald (err %v)", err)
	}
	var src []byte
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src = append(src, b...)
	}
	return src
}

// knownSettings are the HERALD_* variables the herald binary reads: the names cmd/herald
// spells out, and the senders' settings each kind declares. A deploy file naming any other is
// a typo or a setting that went away.
func knownSettings(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(HERALD_[A-Z0-9_]+)"`).FindAllSubmatch(heraldSource(t), -1) {
		known[string(m[1])] = true
	}
	for _, k := range registry.Kinds { // the senders' settings, which each kind declares
		for _, s := range k.Settings {
			known[s.Env] = true
		}
	}
	for kind := range dispatch.DefaultPaces { // the paces per target, one per kind paced
		known[dispatch.PaceSetting(kind)] = true
	}
	known[dispatch.SettingDigestAfter], known[dispatch.SettingDigestWindow] = true, true
	for _, must := range []string{"HERALD_REDIS_URL", "HERALD_LISTEN", "HERALD_BOOTSTRAP_KEY"} {
		if !known[must] {
			t.Fatalf("cmd/herald no longer reads %s; found %v", must, known)
		}
	}
	return known
}

// manifests are the Kubernetes objects of deploy/kubernetes, by name.
type manifests struct {
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	secrets     map[string]*corev1.Secret
	configMaps  map[string]*corev1.ConfigMap
	hpas        map[string]*autoscalingv2.HorizontalPodAutoscaler
}

// loadManifests decodes every document of deploy/kubernetes/*.yaml strictly into the typed
// Kubernetes object its apiVersion and kind name: a misspelt or misplaced field, or a value of
// the wrong type, fails as the API server would refuse it.
func loadManifests(t *testing.T) manifests {
	t.Helper()
	m := manifests{
		deployments: map[string]*appsv1.Deployment{},
		services:    map[string]*corev1.Service{},
		secrets:     map[string]*corev1.Secret{},
		configMaps:  map[string]*corev1.ConfigMap{},
		hpas:        map[string]*autoscalingv2.HorizontalPodAutoscaler{},
	}
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes (err %v)", err)
	}
	separator := regexp.MustCompile(`(?m)^---[ \t]*$`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range separator.Split(string(src), -1) {
			where := fmt.Sprintf("%s, document %d", f, i+1)
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if meta == (metav1.TypeMeta{}) && strings.TrimSpace(stripComments(doc)) == "" {
				continue // only comments
			}
			name, err := decodeObject(m, meta, []byte(doc))
			if err != nil {
				t.Fatalf("%s (%s %s): %v", where, meta.APIVersion, meta.Kind, err)
			}
			if name == "" {
				t.Fatalf("%s: %s without a name", where, meta.Kind)
			}
		}
	}
	return m
}

// decodeObject decodes doc strictly into the type apiVersion and kind name and files it in m
// under its name.
func decodeObject(m manifests, meta metav1.TypeMeta, doc []byte) (string, error) {
	switch meta.APIVersion + " " + meta.Kind {
	case "apps/v1 Deployment":
		return file(doc, m.deployments)
	case "v1 Service":
		return file(doc, m.services)
	case "v1 Secret":
		return file(doc, m.secrets)
	case "v1 ConfigMap":
		return file(doc, m.configMaps)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return file(doc, m.hpas)
	}
	return "", errors.New("no check for this kind: add it to decodeObject")
}

// file decodes doc into a new T and adds it to objects under its name.
func file[T any, P interface {
	*T
	GetName() string
}](doc []byte, objects map[string]*T) (string, error) {
	o := P(new(T))
	if err := decodeStrict(doc, o); err != nil {
		return "", err
	}
	name := o.GetName()
	if objects[name] != nil {
		return "", fmt.Errorf("a second object of this kind named %q", name)
	}
	objects[name] = o
	return name, nil
}

// decodeStrict decodes a YAML document the way kubectl and the API server see it: YAML to JSON
// without regard to the target type (so an unquoted 20 where a string belongs stays a number
// and fails, where yaml.UnmarshalStrict would quietly convert it), then JSON that refuses
// unknown fields, as the API server's strict field validation does. Duplicate keys fail too.
// One difference: encoding/json matches a field whose name differs only in case.
func decodeStrict(doc []byte, into any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

func stripComments(doc string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// role is the herald command a Deployment runs: its container's first argument.
func role(d *appsv1.Deployment) string {
	if c := d.Spec.Template.Spec.Containers; len(c) == 1 && len(c[0].Args) > 0 {
		return c[0].Args[0]
	}
	return ""
}

func TestKubernetesManifests(t *testing.T) {
	m := loadManifests(t)
	known := knownSettings(t)
	byRole := checkDeployments(t, m, known)
	checkAPI(t, m, byRole)
	checkWorkers(t, m, byRole["worker"])
	if sch := byRole["scheduler"]; sch.Spec.Replicas == nil || *sch.Spec.Replicas < 2 {
		t.Errorf("Deployment %s: two schedulers, so that one takes over when the leader goes", sch.Name)
	}
	checkSettings(t, m, known)
}

// checkDeployments checks what every Deployment needs, and returns them by the role they run.
func checkDeployments(t *testing.T, m manifests, known map[string]bool) map[string]*appsv1.Deployment {
	t.Helper()
	byRole := map[string]*appsv1.Deployment{}
	var image string
	for name, d := range m.deployments {
		r := role(d)
		if !slices.Contains(roles, r) {
			t.Fatalf("Deployment %s: one container running herald api, worker or scheduler expected, containers %+v", name, d.Spec.Template.Spec.Containers)
		}
		if byRole[r] != nil {
			t.Errorf("Deployments %s and %s both run herald %s", byRole[r].Name, name, r)
		}
		byRole[r] = d
		if c := d.Labels["app.kubernetes.io/component"]; c != r {
			t.Errorf("Deployment %s runs herald %s but is labelled component %q", name, r, c)
		}
		sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("Deployment %s: selector %v does not select its own pods %v (err %v)", name, d.Spec.Selector, d.Spec.Template.Labels, err)
		}

		pod := d.Spec.Template.Spec
		c := pod.Containers[0]
		if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("Deployment %s: the pod must set runAsNonRoot", name)
		}
		if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("Deployment %s: container %s must have a read-only root filesystem and no privilege escalation", name, c.Name)
		}
		var preStop int64
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
			preStop = c.Lifecycle.PreStop.Sleep.Seconds
		}
		if g := pod.TerminationGracePeriodSeconds; g == nil || *g < preStop+drainSeconds {
			t.Errorf("Deployment %s: terminationGracePeriodSeconds must cover the preStop sleep (%d s) and Herald's drain (%d s)", name, preStop, drainSeconds)
		}

		if image == "" {
			image = c.Image
		}
		if c.Image != image {
			t.Errorf("Deployment %s runs image %s, another runs %s: every role runs the same image", name, c.Image, image)
		}
		if tag := c.Image[strings.LastIndex(c.Image, "/")+1:]; !strings.Contains(tag, ":") || strings.HasSuffix(tag, ":latest") {
			t.Errorf("Deployment %s: image %s needs a version tag (not latest), so that every pod runs the same build", name, c.Image)
		}
		for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := c.Resources.Requests[res]; !ok {
				t.Errorf("Deployment %s: container %s has no %s request", name, c.Name, res)
			}
			if _, ok := c.Resources.Limits[res]; !ok {
				t.Errorf("Deployment %s: container %s has no %s limit", name, c.Name, res)
			}
		}
		checkEnv(t, m, known, name, c)
		checkMemLimit(t, name, c)
		checkListen(t, name, r, c)
	}
	for _, r := range roles {
		if byRole[r] == nil {
			t.Fatalf("no Deployment runs herald %s", r)
		}
	}
	return byRole
}

// checkAPI checks the API's replicas and probes, and that its Service reaches it and only it.
func checkAPI(t *testing.T, m manifests, byRole map[string]*appsv1.Deployment) {
	t.Helper()
	api := byRole["api"]
	c := api.Spec.Template.Spec.Containers[0]
	if api.Spec.Replicas == nil || *api.Spec.Replicas < 2 {
		t.Errorf("Deployment %s: two API replicas at least, so that one can restart while the other serves", api.Name)
	}

	if len(m.services) != 1 {
		t.Fatalf("one Service (the API's) expected, found %d", len(m.services))
	}
	for name, svc := range m.services {
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		if len(svc.Spec.Selector) == 0 || !sel.Matches(labels.Set(api.Spec.Template.Labels)) {
			t.Errorf("Service %s: selector %v does not select the API's pods %v", name, svc.Spec.Selector, api.Spec.Template.Labels)
		}
		for _, other := range []string{"worker", "scheduler"} {
			if sel.Matches(labels.Set(byRole[other].Spec.Template.Labels)) {
				t.Errorf("Service %s also selects the %s pods, which serve nothing", name, other)
			}
		}
		for _, p := range svc.Spec.Ports {
			if containerPort(c, p.TargetPort.String()) != listens["api"].port {
				t.Errorf("Service %s: port %s targets %s, not the API's port", name, p.Name, p.TargetPort.String())
			}
		}
	}
}

// checkWorkers checks that the autoscaler scales the worker Deployment on CPU.
func checkWorkers(t *testing.T, m manifests, worker *appsv1.Deployment) {
	t.Helper()
	if worker.Spec.Replicas != nil {
		t.Errorf("Deployment %s sets replicas: applying it again would undo the autoscaler's choice", worker.Name)
	}
	if len(m.hpas) != 1 {
		t.Fatalf("one HorizontalPodAutoscaler (the workers') expected, found %d", len(m.hpas))
	}
	for name, hpa := range m.hpas {
		ref := hpa.Spec.ScaleTargetRef
		if ref.APIVersion != "apps/v1" || ref.Kind != "Deployment" || ref.Name != worker.Name {
			t.Errorf("HorizontalPodAutoscaler %s scales %s %s %s, not the worker Deployment %s", name, ref.APIVersion, ref.Kind, ref.Name, worker.Name)
		}
		if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 || hpa.Spec.MaxReplicas < *hpa.Spec.MinReplicas {
			t.Errorf("HorizontalPodAutoscaler %s: minReplicas (at least 2) and maxReplicas above it expected", name)
		}
		// Utilization is a share of the request, which checkDeployments requires.
		cpu := slices.ContainsFunc(hpa.Spec.Metrics, func(ms autoscalingv2.MetricSpec) bool {
			return ms.Type == autoscalingv2.ResourceMetricSourceType && ms.Resource != nil &&
				ms.Resource.Name == corev1.ResourceCPU && ms.Resource.Target.Type == autoscalingv2.UtilizationMetricType &&
				ms.Resource.Target.AverageUtilization != nil
		})
		if !cpu {
			t.Errorf("HorizontalPodAutoscaler %s: a CPU utilization target expected, metrics %+v", name, hpa.Spec.Metrics)
		}
	}
}

// checkSettings checks that the Secret holds the secrets herald reads, and that the Secret and
// the ConfigMap name only settings herald reads.
func checkSettings(t *testing.T, m manifests, known map[string]bool) {
	t.Helper()
	secret := m.secrets["herald-secrets"]
	if secret == nil {
		t.Fatal("no Secret herald-secrets")
	}
	for _, key := range []string{"HERALD_REDIS_URL", "HERALD_BOOTSTRAP_KEY"} {
		if !hasKey(secret, key) {
			t.Errorf("Secret %s has no %s", secret.Name, key)
		}
	}
	for _, s := range m.secrets {
		for _, key := range slices.Concat(slices.Collect(maps.Keys(s.StringData)), slices.Collect(maps.Keys(s.Data))) {
			if !known[key] {
				t.Errorf("Secret %s: herald reads no %s", s.Name, key)
			}
		}
	}
	for _, cm := range m.configMaps {
		for key := range cm.Data {
			if !known[key] {
				t.Errorf("ConfigMap %s: herald reads no %s", cm.Name, key)
			}
		}
	}
}

// checkEnv checks that container c of Deployment name takes its settings from the ConfigMap
// and the Secret that exist, and names only settings herald reads.
func checkEnv(t *testing.T, m manifests, known map[string]bool, name string, c corev1.Container) {
	t.Helper()
	fromConfigMap := slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool {
		return e.ConfigMapRef != nil && m.configMaps[e.ConfigMapRef.Name] != nil
	})
	if !fromConfigMap {
		t.Errorf("Deployment %s: container %s does not read its settings from a ConfigMap of the manifests (envFrom %+v)", name, c.Name, c.EnvFrom)
	}
	for _, e := range c.EnvFrom {
		if e.SecretRef != nil && m.secrets[e.SecretRef.Name] == nil {
			t.Errorf("Deployment %s: envFrom names Secret %s, which the manifests do not have", name, e.SecretRef.Name)
		}
	}
	redisFromSecret := false
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "HERALD_") && !known[e.Name] {
			t.Errorf("Deployment %s: herald reads no %s", name, e.Name)
		}
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		if s := m.secrets[ref.Name]; s == nil || (!optional && !hasKey(s, ref.Key)) {
			t.Errorf("Deployment %s: %s comes from key %s of Secret %s, which the manifests do not have", name, e.Name, ref.Key, ref.Name)
		}
		// Mail and SMS are optional features: a Secret without their keys must not keep pods
		// from starting.
		if slices.Contains(optionalSecrets, e.Name) && !optional {
			t.Errorf("Deployment %s: %s must be an optional key of the Secret", name, e.Name)
		}
		redisFromSecret = redisFromSecret || e.Name == "HERALD_REDIS_URL"
	}
	if !redisFromSecret {
		t.Errorf("Deployment %s: HERALD_REDIS_URL (it may hold a password) must come from the Secret", name)
	}
}

// optionalSecrets are the secrets of optional features: mail, SMS, action links and chat
// buttons.
var optionalSecrets = []string{"HERALD_SMTP_PASSWORD", "HERALD_SMS_TOKEN", "HERALD_ACTION_KEYS", "HERALD_CHAT_B_SIGNING_SECRET"}

// checkMemLimit checks that container c sets GOMEMLIMIT to 80-90 % of its memory limit: the Go
// runtime collects harder near it, and the rest is headroom for memory outside the Go heap,
// so that the container is not killed before the runtime has collected.
func checkMemLimit(t *testing.T, name string, c corev1.Container) {
	t.Helper()
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "GOMEMLIMIT" })
	if i < 0 {
		t.Errorf("Deployment %s: no GOMEMLIMIT", name)
		return
	}
	// Go's units: B, KiB, MiB, GiB (runtime/debug.SetMemoryLimit).
	v := c.Env[i].Value
	m := regexp.MustCompile(`^(\d+)(B|KiB|MiB|GiB)$`).FindStringSubmatch(v)
	if m == nil {
		t.Errorf("Deployment %s: GOMEMLIMIT %q is not a number of B, KiB, MiB or GiB", name, v)
		return
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	gomem := n << map[string]int{"B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[m[2]]
	limit := c.Resources.Limits[corev1.ResourceMemory]
	if share := float64(gomem) / float64(limit.Value()); share < 0.8 || share > 0.9 {
		t.Errorf("Deployment %s: GOMEMLIMIT %s is %.0f %% of the memory limit %s; 80-90 %% leaves the runtime room", name, v, 100*share, limit.String())
	}
}

func hasKey(s *corev1.Secret, key string) bool {
	_, inString := s.StringData[key]
	_, inData := s.Data[key]
	return inString || inData
}

// containerPort resolves port, a number or a port's name, to a port c declares (0: none).
func containerPort(c corev1.Container, port string) int32 {
	for _, p := range c.Ports {
		if p.Name == port || fmt.Sprint(p.ContainerPort) == port {
			return p.ContainerPort
		}
	}
	return 0
}

// checkListen checks that container c of Deployment name, running herald role, listens where
// its probes ask: readiness on /readyz, liveness on /healthz.
func checkListen(t *testing.T, name, role string, c corev1.Container) {
	t.Helper()
	want := listens[role]
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == want.setting }); i < 0 || c.Env[i].Value != fmt.Sprintf(":%d", want.port) {
		t.Errorf("Deployment %s: %s=:%d expected in the container's env, where the probes ask", name, want.setting, want.port)
	}
	for _, probe := range []struct {
		kind, path string
		p          *corev1.Probe
	}{{"readiness", "/readyz", c.ReadinessProbe}, {"liveness", "/healthz", c.LivenessProbe}} {
		if probe.p == nil || probe.p.HTTPGet == nil {
			t.Errorf("Deployment %s: no HTTP %s probe", name, probe.kind)
			continue
		}
		get := probe.p.HTTPGet
		if get.Path != probe.path || containerPort(c, get.Port.String()) != want.port {
			t.Errorf("Deployment %s: %s probe on %s port %s, %s on port %d expected", name, probe.kind, get.Path, get.Port.String(), probe.path, want.port)
		}
	}
}

// composeFile is the part of a compose file the test checks.
type composeFile struct {
	Services map[string]composeService `json:"services"`
	Volumes  map[string]any            `json:"volumes"`
}

type composeService struct {
	Image       string            `json:"image"`
	Build       *composeBuild     `json:"build"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	EnvFile     string            `json:"env_file"`
	Ports       []string          `json:"ports"`
	Volumes     []string          `json:"volumes"`
	DependsOn   map[string]struct {
		Condition string `json:"condition"`
	} `json:"depends_on"`
	Healthcheck *struct {
		Test []string `json:"test"`
	} `json:"healthcheck"`
	StopGracePeriod string `json:"stop_grace_period"`
	Deploy          struct {
		Replicas int `json:"replicas"`
	} `json:"deploy"`
}

type composeBuild struct {
	Context    string `json:"context"`
	Dockerfile string `json:"dockerfile"`
}

func TestCompose(t *testing.T) {
	src, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.Unmarshal(src, &f); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	known := knownSettings(t)

	redis, ok := f.Services["redis"]
	if !ok {
		t.Fatal("compose.yaml has no redis service")
	}
	cmd := strings.Join(redis.Command, " ")
	if !strings.Contains(cmd, "--appendonly yes") || !strings.Contains(cmd, "--appendfsync everysec") {
		t.Errorf("redis must keep an append-only file synced every second; command %q", cmd)
	}
	if !slices.ContainsFunc(redis.Volumes, func(v string) bool {
		name, dir, _ := strings.Cut(v, ":")
		_, declared := f.Volumes[name]
		return dir == "/data" && declared
	}) {
		t.Errorf("redis must keep /data on a named volume, so that the append-only file outlives the container; volumes %v", redis.Volumes)
	}

	for _, r := range roles {
		s, ok := f.Services[r]
		if !ok {
			t.Errorf("compose.yaml has no %s service", r)
			continue
		}
		if len(s.Command) != 1 || s.Command[0] != r {
			t.Errorf("service %s runs herald %v", r, s.Command)
		}
		if s.Image == "" || s.Build == nil {
			t.Errorf("service %s must build (and name) Herald's image", r)
		} else if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil || filepath.Clean(s.Build.Context) != ".." {
			t.Errorf("service %s builds %s in %s: the repository's root and deploy/Dockerfile expected (%v)", r, s.Build.Dockerfile, s.Build.Context, err)
		}
		if got := s.Environment["HERALD_REDIS_URL"]; got != "redis://redis:6379/0" {
			t.Errorf("service %s: HERALD_REDIS_URL %q, redis://redis:6379/0 expected", r, got)
		}
		for name := range s.Environment {
			if !known[name] {
				t.Errorf("service %s: herald reads no %s", r, name)
			}
		}
		if s.EnvFile != "herald.env" {
			t.Errorf("service %s: env_file %q, herald.env (the copy of herald.env.example) expected", r, s.EnvFile)
		}
		if s.DependsOn["redis"].Condition != "service_healthy" {
			t.Errorf("service %s must wait for redis to be healthy", r)
		}
		if d, err := time.ParseDuration(s.StopGracePeriod); err != nil || d < drainSeconds*time.Second {
			t.Errorf("service %s: stop_grace_period %q must cover Herald's drain (%d s)", r, s.StopGracePeriod, drainSeconds)
		}
		want := listens[r]
		if got := s.Environment[want.setting]; got != fmt.Sprintf(":%d", want.port) {
			t.Errorf("service %s: %s %q, :%d (where the healthcheck asks) expected", r, want.setting, got, want.port)
		}
		if s.Healthcheck == nil {
			t.Errorf("service %s has no healthcheck", r)
		} else if hc := strings.Join(s.Healthcheck.Test, " "); !strings.Contains(hc, fmt.Sprintf("127.0.0.1:%d/healthz", want.port)) ||
			!strings.Contains(hc, fmt.Sprintf("127.0.0.1:%d/readyz", want.port)) {
			t.Errorf("service %s: the healthcheck must ask /healthz and /readyz on port %d: %q", r, want.port, hc)
		}
	}

	if ports := f.Services["api"].Ports; !slices.ContainsFunc(ports, func(p string) bool { return strings.HasSuffix(p, ":8080") }) {
		t.Errorf("api must publish its port 8080; ports %v", ports)
	}
	if n := f.Services["worker"].Deploy.Replicas; n != 2 {
		t.Errorf("worker: deploy.replicas %d, two workers expected", n)
	}
	if _, err := os.Stat("herald.env.example"); err != nil {
		t.Errorf("compose reads herald.env, made from herald.env.example: %v", err)
	}
}

// dockerInstruction is one instruction of a Dockerfile, its continuation lines joined.
type dockerInstruction struct {
	op, args string
}

func parseDockerfile(t *testing.T, path string) []dockerInstruction {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstruction
	var cur strings.Builder
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") { // Docker skips both, even mid-instruction
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(rest + " ")
			continue
		}
		cur.WriteString(line)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, dockerInstruction{strings.ToUpper(op), strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	return out
}

// dockerStages are the instructions of deploy/Dockerfile's stages, in order.
func dockerStages(t *testing.T) [][]dockerInstruction {
	t.Helper()
	var stages [][]dockerInstruction
	for _, in := range parseDockerfile(t, "Dockerfile") {
		if in.op == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.op != "ARG" {
				t.Fatalf("%s before the first FROM", in.op)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("a builder stage and a runtime stage expected, found %d stages", len(stages))
	}
	return stages
}

// imageConfig is what an image runs and says of itself: what deploy/Dockerfile and
// deploy/build-image.sh must agree on.
type imageConfig struct {
	User       string
	Entrypoint []string
	Cmd        []string
	Ports      []string // sorted
	Labels     map[string]string
}

// ociLabels are the labels both images carry; the build arguments name the version's and
// the git hash's.
var ociLabels = map[string]string{
	"org.opencontainers.image.title":    "herald",
	"org.opencontainers.image.source":   "https://github.com/heraldhq/herald",
	"org.opencontainers.image.licenses": "Apache-2.0",
	"org.opencontainers.image.version":  "${VERSION}",
	"org.opencontainers.image.revision": "${GIT_HASH}",
}

// dockerfileConfig is the config deploy/Dockerfile's final stage gives its image when built
// with the build arguments args. As with Docker, a stage sees only the arguments it declares.
func dockerfileConfig(t *testing.T, args map[string]string) imageConfig {
	t.Helper()
	stages := dockerStages(t)
	c := imageConfig{Labels: map[string]string{}}
	declared := map[string]bool{}
	expand := func(s string) string {
		return os.Expand(s, func(k string) string {
			if declared[k] {
				return args[k]
			}
			return ""
		})
	}
	execForm := func(in dockerInstruction) []string {
		var v []string
		if err := json.Unmarshal([]byte(in.args), &v); err != nil {
			t.Fatalf("%s %s: the exec form (a JSON array) expected: %v", in.op, in.args, err)
		}
		return v
	}
	for _, in := range stages[len(stages)-1] {
		switch in.op {
		case "ARG":
			name, _, _ := strings.Cut(in.args, "=")
			declared[name] = true
		case "USER":
			c.User = expand(in.args)
		case "ENTRYPOINT":
			c.Entrypoint = execForm(in)
		case "CMD":
			c.Cmd = execForm(in)
		case "EXPOSE":
			c.Ports = append(c.Ports, strings.Fields(in.args)...)
		case "LABEL":
			for _, kv := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					t.Fatalf("LABEL %s: key=value expected", in.args)
				}
				c.Labels[k] = expand(strings.Trim(v, `"`))
			}
		}
	}
	slices.Sort(c.Ports)
	return c
}

func TestDockerfile(t *testing.T) {
	stages := dockerStages(t)
	builder, final := stages[0], stages[len(stages)-1]
	from := strings.Fields(builder[0].args)
	if len(from) != 3 || !strings.HasPrefix(from[0], "golang:1.26") || !strings.EqualFold(from[1], "AS") {
		t.Fatalf("the first stage must be FROM golang:1.26... AS <name>, not %q", builder[0].args)
	}
	builderName := from[2]
	build := slices.IndexFunc(builder, func(in dockerInstruction) bool {
		return in.op == "RUN" && strings.Contains(in.args, "go build")
	})
	if build < 0 {
		t.Fatal("the builder stage runs no go build")
	}
	for _, want := range []string{"-trimpath", "-s -w", "-X main.version=${VERSION}", "-X main.gitHash=${GIT_HASH}", "./cmd/herald", "CGO_ENABLED=0"} {
		if !strings.Contains(builder[build].args, want) {
			t.Errorf("go build lacks %s: %s", want, builder[build].args)
		}
	}
	for _, arg := range []string{"VERSION", "GIT_HASH"} {
		if !slices.ContainsFunc(builder[:build], func(in dockerInstruction) bool {
			return in.op == "ARG" && (in.args == arg || strings.HasPrefix(in.args, arg+"="))
		}) {
			t.Errorf("the builder stage declares no ARG %s before go build", arg)
		}
	}
	for _, v := range []string{"version", "gitHash"} {
		if !hasStringVar(t, "../cmd/herald", v) {
			t.Errorf("-X main.%s sets nothing: package main of cmd/herald has no string variable %s", v, v)
		}
	}

	last := func(op string) string {
		for _, in := range slices.Backward(final) {
			if in.op == op {
				return in.args
			}
		}
		return ""
	}
	if !slices.ContainsFunc(final, func(in dockerInstruction) bool {
		return in.op == "COPY" && strings.Contains(in.args, "--from="+builderName+" ")
	}) {
		t.Errorf("the final stage copies nothing from the %s stage", builderName)
	}
	user := last("USER")
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "root" || uid == "0" {
		t.Errorf("the final stage must run as a user other than root, USER %q", user)
	} else if strings.Trim(uid, "0123456789") != "" {
		t.Errorf("USER %q: a numeric uid, so that Kubernetes can check runAsNonRoot", user)
	}
	buildArgs := map[string]string{"VERSION": "1.2.3", "GIT_HASH": "abc123"}
	c := dockerfileConfig(t, buildArgs)
	if !slices.Equal(c.Entrypoint, []string{"/herald"}) {
		t.Errorf(`ENTRYPOINT %q, ["/herald"] expected`, c.Entrypoint)
	}
	if len(c.Cmd) != 1 || !slices.Contains(roles, c.Cmd[0]) {
		t.Errorf("CMD %q: a role expected", c.Cmd)
	}
	for _, r := range roles {
		if port := fmt.Sprint(listens[r].port); !slices.Contains(c.Ports, port) {
			t.Errorf("EXPOSE %v lacks %s, where herald %s listens", c.Ports, port, r)
		}
	}
	// The user exists by name with the ids USER gives, as in deploy/build-image.sh's image.
	uid, gid, _ := strings.Cut(c.User, ":")
	for _, re := range []string{`groupadd [^&]*--gid ` + gid + ` [^&]*herald\b`, `useradd [^&]*--uid ` + uid + ` --gid ` + gid + ` [^&]*herald\b`} {
		if !slices.ContainsFunc(final, func(in dockerInstruction) bool {
			return in.op == "RUN" && regexp.MustCompile(re).MatchString(in.args)
		}) {
			t.Errorf("the final stage runs no %s: the user herald must be %s", re, c.User)
		}
	}
	for k, v := range ociLabels {
		want := os.Expand(v, func(k string) string { return buildArgs[k] })
		if c.Labels[k] != want {
			t.Errorf("LABEL %s=%q, %q expected (a build argument is seen only by a stage that declares it)", k, c.Labels[k], want)
		}
	}
}

// hasStringVar says whether package main in dir declares a package-level string variable name.
func hasStringVar(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name != name {
						continue
					}
					if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "string" {
						return true
					}
					if vs.Type == nil && i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

func TestEnvExample(t *testing.T) {
	known := knownSettings(t)
	src, err := os.ReadFile("herald.env.example")
	if err != nil {
		t.Fatal(err)
	}
	setting := regexp.MustCompile(`^#?(HERALD_[A-Z0-9_]+)=(.*)$`)
	set := map[string]bool{}
	for i, line := range strings.Split(string(src), "\n") {
		m := setting.FindStringSubmatch(line)
		if m == nil {
			if line != "" && !strings.HasPrefix(line, "#") {
				t.Errorf("herald.env.example:%d: neither KEY=value nor a comment: %q", i+1, line)
			}
			continue
		}
		if !known[m[1]] {
			t.Errorf("herald.env.example:%d: herald reads no %s", i+1, m[1])
		}
		// systemd and compose read quotes and a trailing comment differently: allow neither.
		if strings.ContainsAny(m[2], `"'#`) {
			t.Errorf("herald.env.example:%d: a value without quotes or a comment expected: %q", i+1, line)
		}
		if !strings.HasPrefix(line, "#") {
			set[m[1]] = true
		}
	}
	if !set["HERALD_REDIS_URL"] {
		t.Error("herald.env.example must set HERALD_REDIS_URL: no role runs without it")
	}
}

// TestSystemdUnits runs systemd-analyze verify on each unit, which reports unknown sections
// and keys, values it cannot parse (a misspelt ProtectSystem=, a bad TimeoutStopSec=), a
// template that does not instantiate, and an ExecStart= binary that is missing or not
// executable. The units start /usr/local/bin/herald, which this machine lacks, so the test
// verifies copies that start an executable stand-in instead; the rest of each unit is verified
// as written. systemd-analyze warns without failing, so any output fails the test.
func TestSystemdUnits(t *testing.T) {
	const binary = "/usr/local/bin/herald"
	units := map[string]string{ // unit file → the role it runs
		"herald-api.service":       "api",
		"herald-worker@.service":   "worker",
		"herald-scheduler.service": "scheduler",
	}
	dir := t.TempDir()
	standIn := filepath.Join(dir, "herald")
	if err := os.WriteFile(standIn, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	heraldSrc := heraldSource(t)
	var verify []string
	for unit, r := range units {
		src, err := os.ReadFile(filepath.Join("systemd", unit))
		if err != nil {
			t.Fatal(err)
		}
		keys := unitKeys(string(src))
		command := strings.Fields(keys["ExecStart"])
		if len(command) < 2 || command[0] != binary || command[1] != r {
			t.Errorf("%s: ExecStart=%s, %s %s expected", unit, keys["ExecStart"], binary, r)
		}
		for _, arg := range command {
			if flag, ok := strings.CutPrefix(arg, "--"); ok && !bytes.Contains(heraldSrc, []byte(`"`+flag+`"`)) {
				t.Errorf("%s: herald has no flag %s", unit, arg)
			}
		}
		// Several workers, and a scheduler, may run on one machine: each needs its own port.
		if r != "api" && !slices.Contains(command, "--metrics-listen") {
			t.Errorf("%s: ExecStart=%s must give --metrics-listen, or every instance serves on the default :9090", unit, keys["ExecStart"])
		}
		for key, want := range map[string]string{
			"EnvironmentFile": "/etc/herald/herald.env",
			"Restart":         "on-failure",
			"DynamicUser":     "yes",
			"NoNewPrivileges": "yes",
			"ProtectSystem":   "strict",
			"PrivateTmp":      "yes",
		} {
			if got := keys[key]; got != want {
				t.Errorf("%s: %s=%s, %s expected", unit, key, got, want)
			}
		}
		stop, err := time.ParseDuration(keys["TimeoutStopSec"])
		if err != nil || stop < drainSeconds*time.Second {
			t.Errorf("%s: TimeoutStopSec=%s must cover Herald's drain (%d s)", unit, keys["TimeoutStopSec"], drainSeconds)
		}
		copied := strings.ReplaceAll(string(src), "ExecStart="+binary+" ", "ExecStart="+standIn+" ")
		if err := os.WriteFile(filepath.Join(dir, unit), []byte(copied), 0o644); err != nil {
			t.Fatal(err)
		}
		verify = append(verify, filepath.Join(dir, strings.Replace(unit, "@.", "@9092.", 1)))
	}

	analyze := testkit.Program(t, "systemd-analyze", "it verifies the units (Debian: apt-get install systemd)")
	// --man=no: Documentation= is a web address. --recursive-errors=no: the units are verified,
	// not the machine's own targets they are ordered after.
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no", "--recursive-errors=no"}, verify...)...)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// unitKeys are a unit file's Key=value settings (the last of each key; sections ignored).
func unitKeys(src string) map[string]string {
	keys := map[string]string{}
	for line := range strings.Lines(src) {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, ";") {
			keys[k] = v
		}
	}
	return keys
}
