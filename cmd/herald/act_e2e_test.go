package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/heraldhq/herald/api"
	"github.com/heraldhq/herald/channels/channelstest"
	"github.com/heraldhq/herald/internal/browsertest"
	"github.com/heraldhq/herald/internal/testkit"
	"github.com/heraldhq/herald/store/storetest"
)

// The person on call acts from a real email: herald dev (which makes its own action key, its
// links under its own address) mails an alert's notice over SMTP; headless chromium opens the
// mail's acknowledge link, and the page shows the alert while nothing changes (read back
// through the API); pressing its button acknowledges the alert in the recipient's name, as
// the API then says, and the page says so. The page asks nothing of any other host. Both
// pages' screenshots are kept (go test -artifacts).
func TestActFromARealEmail(t *testing.T) {
	chrome := browsertest.Find(t)
	smtp := channelstest.NewSMTPServer(t)
	addr := testkit.FreeLoopbackAddr(t)
	const publicKey, privateKey, oncall = "act", "5e0a9c1d-action-links-e2e-key", "oncall@example.com"
	dev := startRole(t, "dev", "herald dev", "HERALD_REDIS_URL="+storetest.URL(storetest.Redis(t)), "HERALD_LISTEN="+addr,
		"HERALD_BOOTSTRAP_KEY="+publicKey+":"+privateKey, "HERALD_SMTP_ADDR="+smtp.Addr, "HERALD_MINUTE=1s", "HERALD_LOG_LEVEL=info",
		"HERALD_ACTION_KEYS=", "HERALD_EXTERNAL_URL=")
	waitReady(t, 20*time.Second, "herald dev", addr)
	if out := dev.logs.String(); !strings.Contains(out, "Action links in notices start with http://"+addr) || !strings.Contains(out, "made for this run") {
		t.Errorf("herald dev's banner does not say where action links go and that it made their key:\n%s", out)
	}
	client := newClusterAPI("http://"+addr+api.BasePath, publicKey, privateKey)
	project, err := client.api.ProjectWithOnly(context.Background(), "payments", map[string]any{"eventTypeName": "HOST_DOWN", "enabled": true,
		"notifications": []any{map[string]any{"typeName": "EMAIL", "emailAddress": oncall, "delayMin": 0, "intervalMin": 60}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.observe(project, []string{"db1.example.com"}); err != nil {
		t.Fatal(err)
	}

	// The mail's links, and among them the one whose page offers to acknowledge for an hour.
	var links []string
	waitFor(t, 20*time.Second, "a mail with action links to "+oncall, func() (bool, string) {
		for _, m := range smtp.Mails() {
			if slices.Contains(m.To, oncall) {
				links = actLinks(t, m.Data)
				return len(links) > 0, string(m.Data)
			}
		}
		return false, "no mail yet"
	})
	var ackLink string
	for _, l := range links {
		if u, err := url.Parse(l); err != nil || u.Host != addr {
			t.Fatalf("a link of the mail is not under herald dev's address %s: %s", addr, l)
		}
		if _, page := fetch(t, l); strings.Contains(page, "Acknowledge for 1 hour") {
			ackLink = l
		}
	}
	if ackLink == "" {
		t.Fatalf("no link of the mail offers to acknowledge for an hour: %q", links)
	}
	alertID := onlyOpenAlert(t, client, project)
	alertPath := "/groups/" + project + "/alerts/" + alertID
	waitFor(t, 10*time.Second, "the mail's delivery to be recorded", func() (bool, string) {
		var page struct{ TotalCount int }
		client.call(t, "GET", alertPath+"/deliveries", nil, http.StatusOK, &page)
		return page.TotalCount > 0, "no delivery attempt recorded"
	})

	var mu sync.Mutex
	var requested []string
	ctx, cancel := chromeContext(t, chrome.Path(), func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	})
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(ackLink), chromedp.WaitVisible(chromedp.CSS("button"))); err != nil {
		t.Fatalf("chromium opening the link: %v", err)
	}
	before, shotBefore := pageShown(t, ctx)
	for _, want := range []string{"Host down: db1.example.com", "OPEN", "payments", "Acknowledge for 1 hour", "EMAIL", "DELIVERED"} {
		if !strings.Contains(before, want) {
			t.Errorf("the page does not show %q:\n%s", want, before)
		}
	}
	var alert struct {
		AcknowledgedUntil, AcknowledgingUsername, AcknowledgementComment string
	}
	client.call(t, "GET", alertPath, nil, http.StatusOK, &alert)
	if alert.AcknowledgedUntil != "" {
		t.Fatalf("opening the link acknowledged the alert: %+v", alert)
	}

	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS("button")))); err != nil {
		t.Fatalf("chromium pressing the button: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`[role="status"]`))); err != nil {
		t.Fatalf("the answer to the button says nothing: %v", err)
	}
	after, shotAfter := pageShown(t, ctx)
	client.call(t, "GET", alertPath, nil, http.StatusOK, &alert)
	if alert.AcknowledgedUntil == "" || alert.AcknowledgingUsername != oncall || !strings.Contains(alert.AcknowledgementComment, "notice") {
		t.Fatalf("the button did not acknowledge the alert in the recipient's name: %+v", alert)
	}
	if !strings.Contains(after, "Acknowledged until") || !strings.Contains(after, "by "+oncall) {
		t.Errorf("the page does not say the alert was acknowledged, and by whom:\n%s", after)
	}
	var events struct {
		Results []struct {
			Username string
			Raw      map[string]any
		}
	}
	client.call(t, "GET", "/groups/"+project+"/events?eventType=ALERT_ACKNOWLEDGED_AUDIT&includeRaw=true", nil, http.StatusOK, &events)
	if len(events.Results) != 1 || events.Results[0].Username != oncall || events.Results[0].Raw["source"] != api.SourceNotice {
		t.Errorf("want one acknowledgement event naming the recipient, from a notice: %+v", events.Results)
	}

	mu.Lock()
	for _, u := range requested {
		if p, err := url.Parse(u); err != nil || p.Host != addr {
			t.Errorf("the page made a request outside herald dev: %s", u)
		}
	}
	mu.Unlock()
	for name, shot := range map[string][]byte{"act-link-opened.png": shotBefore, "act-link-acknowledged.png": shotAfter} {
		if len(shot) < 10<<10 {
			t.Errorf("the screenshot %s is %d bytes: no page drawn", name, len(shot))
		}
		if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if token := strings.TrimPrefix(ackLink[strings.Index(ackLink, api.ActPath):], api.ActPath); strings.Contains(dev.logs.String(), token) {
		t.Error("the token reached herald dev's log")
	}
}

// chromeContext is a headless chromium (at path) that resolves no host but 127.0.0.1, with a
// profile of its own, for at most a minute; listen is told of its page's events.
func chromeContext(t *testing.T, path string, listen func(ev any)) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	timeout, cancelTimeout := context.WithTimeout(context.Background(), 60*time.Second)
	alloc, cancelAlloc := chromedp.NewExecAllocator(timeout, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithListener(listen))
	return ctx, func() { cancelCtx(); cancelAlloc(); cancelTimeout() }
}

// pageShown is the text of the page chromium shows in ctx, and its screenshot.
func pageShown(t *testing.T, ctx context.Context) (string, []byte) {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("body")))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	return text, shot
}

// actLink is an action link in a mail's text.
var actLink = regexp.MustCompile(`https?://[^\s"'<>]+` + regexp.QuoteMeta(api.ActPath) + `[A-Za-z0-9_-]+`)

// actLinks are the distinct action links of a mail, read from its decoded text and HTML parts.
func actLinks(t *testing.T, data []byte) []string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the mail does not parse: %v", err)
	}
	var text strings.Builder
	var walk func(header map[string][]string, body io.Reader)
	walk = func(header map[string][]string, body io.Reader) {
		h := mail.Header(header)
		mt, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
		if strings.HasPrefix(mt, "multipart/") {
			r := multipart.NewReader(body, params["boundary"])
			for {
				part, err := r.NextPart() // decodes quoted-printable itself
				if err != nil {
					return
				}
				walk(part.Header, part)
			}
		}
		switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, body)
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		}
		b, _ := io.ReadAll(body)
		text.Write(b)
		text.WriteByte('\n')
	}
	walk(msg.Header, msg.Body)
	return slices.Compact(slices.Sorted(slices.Values(actLink.FindAllString(text.String(), -1))))
}

// onlyOpenAlert is the id of the project's one open alert.
func onlyOpenAlert(t *testing.T, c clusterAPI, project string) string {
	t.Helper()
	var page struct{ Results []struct{ ID string } }
	c.call(t, "GET", "/groups/"+project+"/alerts?status=OPEN", nil, http.StatusOK, &page)
	if len(page.Results) != 1 {
		t.Fatalf("project %s has %d open alerts, want 1", project, len(page.Results))
	}
	return page.Results[0].ID
}
