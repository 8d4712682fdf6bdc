package deploy

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store/storetest"
)

// TestImage builds Herald's image with deploy/build-image.sh into a storage root of its own,
// mounts it, and runs what is inside: herald version must report the version and git hash its
// labels carry, and herald api, run as the image's user against a real Redis, must answer
// /readyz. The image's config must be the one deploy/Dockerfile gives.
func TestImage(t *testing.T) {
	buildah := imageTools(t)
	// Redis first: without redis-server the test skips before building anything. The API
	// runs chrooted into the image, where the test's unix sockets are out of reach; the
	// loopback interface is shared.
	redisAddr := storetest.StartTCP(t)

	root := t.TempDir()
	storage := []string{"--storage-driver", "vfs", "--root", root, "--runroot", filepath.Join(root, "run")}
	run := func(args ...string) string {
		t.Helper()
		var stderr bytes.Buffer
		cmd := exec.Command(buildah, append(slices.Clone(storage), args...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("buildah %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}

	const version = "v0.0.0-imagetest"
	hash, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	gitHash := strings.TrimSpace(string(hash))

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	build := exec.CommandContext(ctx, "./build-image.sh", "-t", "localhost/herald:imagetest", "-r", root, version)
	build.Stderr = &stderr
	start := time.Now()
	out, err := build.Output()
	if err != nil {
		t.Fatalf("build-image.sh: %v\n%s", err, stderr.String())
	}
	id := strings.TrimSpace(string(out))
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(id) {
		t.Fatalf("build-image.sh printed %q, an image id expected", out)
	}
	t.Logf("image %.12s built in %v", id, time.Since(start).Round(100*time.Millisecond))
	t.Cleanup(func() { run("rmi", "--force", id) })

	// The image's config, against the Dockerfile's built with the same arguments.
	var inspect struct {
		OCIv1 struct {
			Config struct {
				User         string
				Entrypoint   []string
				Cmd          []string
				ExposedPorts map[string]struct{}
				Labels       map[string]string
			} `json:"config"`
		}
	}
	if err := json.Unmarshal([]byte(run("inspect", "--type", "image", id)), &inspect); err != nil {
		t.Fatal(err)
	}
	ic := inspect.OCIv1.Config
	got := imageConfig{User: ic.User, Entrypoint: ic.Entrypoint, Cmd: ic.Cmd, Labels: map[string]string{}}
	for p := range ic.ExposedPorts {
		got.Ports = append(got.Ports, strings.TrimSuffix(p, "/tcp"))
	}
	slices.Sort(got.Ports)
	want := dockerfileConfig(t, map[string]string{"VERSION": version, "GIT_HASH": gitHash})
	for k := range want.Labels {
		got.Labels[k] = ic.Labels[k]
	}
	if got.User != want.User || !slices.Equal(got.Entrypoint, want.Entrypoint) || !slices.Equal(got.Cmd, want.Cmd) ||
		!slices.Equal(got.Ports, want.Ports) || !maps.Equal(got.Labels, want.Labels) {
		t.Errorf("the image's config differs from deploy/Dockerfile's:\n image      %+v\n Dockerfile %+v", got, want)
	}
	if ic.Labels["org.opencontainers.image.version"] != version || ic.Labels["org.opencontainers.image.revision"] != gitHash {
		t.Errorf("labels %v: version %s and revision %s expected", ic.Labels, version, gitHash)
	}

	if len(ic.Entrypoint) == 0 {
		t.Fatal("the image has no entrypoint")
	}

	ctr := run("from", "--pull-never", id)
	t.Cleanup(func() { run("rm", ctr) }) // rm unmounts too
	mnt := run("mount", ctr)

	// The user the config names exists in the image, and so does a CA bundle Go can read.
	uid, gid, _ := strings.Cut(ic.User, ":")
	uidN, err1 := strconv.ParseUint(uid, 10, 32)
	gidN, err2 := strconv.ParseUint(gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil || uidN == 0 || gidN == 0 {
		t.Fatalf("user %q: a numeric uid:gid other than root expected (%v)", ic.User, err)
	}
	passwd, _ := os.ReadFile(filepath.Join(mnt, "etc/passwd"))
	if !regexp.MustCompile(`(?m)^herald:x:` + uid + `:` + gid + `:`).Match(passwd) {
		t.Errorf("/etc/passwd names no user herald %s:%s:\n%s", uid, gid, passwd)
	}
	group, _ := os.ReadFile(filepath.Join(mnt, "etc/group"))
	if !regexp.MustCompile(`(?m)^herald:x:` + gid + `:`).Match(group) {
		t.Errorf("/etc/group names no group herald %s:\n%s", gid, group)
	}
	if pem, err := os.ReadFile(filepath.Join(mnt, "etc/ssl/certs/ca-certificates.crt")); err != nil {
		t.Errorf("no CA bundle: %v", err)
	} else if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		t.Errorf("the CA bundle holds no certificate")
	}

	// inImage is the image's entrypoint with args, chrooted into its filesystem as its user,
	// with env alone as its environment.
	inImage := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(ic.Entrypoint[0], append(ic.Entrypoint[1:], args...)...)
		cmd.Dir = "/"
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Chroot:     mnt,
			Credential: &syscall.Credential{Uid: uint32(uidN), Gid: uint32(gidN)},
		}
		return cmd
	}

	out, err = inImage(nil, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("herald version in the image: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), version) || !strings.Contains(string(out), gitHash) {
		t.Errorf("herald version in the image printed %q; version %s and git hash %s expected", out, version, gitHash)
	}

	listen := testkit.FreeLoopbackAddr(t)
	api := inImage([]string{"HERALD_REDIS_URL=redis://" + redisAddr + "/0", "HERALD_LISTEN=" + listen}, ic.Cmd...)
	var logs testkit.Buffer
	api.Stdout, api.Stderr = &logs, &logs
	if err := api.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- api.Wait() }()
	t.Cleanup(func() {
		_ = api.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Duration(drainSeconds+5) * time.Second):
			_ = api.Process.Kill()
			<-exited
			t.Errorf("herald api did not stop on SIGTERM; its log:\n%s", logs.String())
		}
	})
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get("http://" + listen + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		select {
		case werr := <-exited:
			exited <- werr
			t.Fatalf("herald api exited (%v); its log:\n%s", werr, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not answer 200 within 30s (%v); its log:\n%s", err, logs.String())
		}
	}
	t.Logf("herald api from the image ready on %s", listen)
}

// imageTools is buildah's path. The test needs it and root (to chroot and to take the image's
// user); CI must run it, elsewhere it skips without them.
func imageTools(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("buildah")
	why := ""
	switch {
	case err != nil:
		why = "buildah is not installed (Debian: apt-get install buildah)"
	case os.Geteuid() != 0:
		why = "the image test runs as root (it chroots into the image and takes its user)"
	default:
		return bin
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s: CI must build and start the image", why)
	}
	t.Skipf("%s; skipping the image test", why)
	return ""
}
