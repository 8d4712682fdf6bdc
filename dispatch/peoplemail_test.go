package dispatch_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/heraldhq/herald"
	"github.com/heraldhq/herald/actlink"
	"github.com/heraldhq/herald/dispatch"
)

// A GROUP notification by email reaches each person through the EMAIL sender as a readable
// multipart notice: the project and organization by name, the event type in words, and links
// made for that person (their username), in the plain part and as buttons in the HTML part.
func TestGroupMailIsReadableWithThePersonsLinks(t *testing.T) {
	keys, err := actlink.ParseKeys("mail1:" + strings.Repeat("m", 40))
	linker, lerr := actlink.NewLinker(keys, "https://herald.example.com")
	if err != nil || lerr != nil {
		t.Fatal(err, lerr)
	}
	r, smtp := newMailRig(t, func(c *dispatch.EngineConfig) { c.Linker = linker })
	now := time.Now()
	u := herald.User{ID: herald.NewID(now), Username: "ana", EmailAddress: "ana@example.com", FirstName: "A", LastName: "B",
		Roles: []herald.Role{{GroupID: r.project, RoleName: herald.GroupOwner}}, Created: herald.At(now)}
	if err := r.Store.CreateUser(context.Background(), u, herald.NewEvent(herald.EventUserCreated, herald.Principal{}, herald.Scope{}, now), nil); err != nil {
		t.Fatal(err)
	}
	r.config(map[string]any{"eventTypeName": "HOST_DOWN", "notifications": []any{map[string]any{
		"typeName": "GROUP", "roles": []string{"GROUP_OWNER"}, "emailEnabled": true, "smsEnabled": false, "delayMin": 0, "intervalMin": 60}}})
	r.observe(hostDown("h1", true))
	if !eventually(15*time.Second, func() bool { return len(smtp.Mails()) >= 1 }) {
		t.Fatalf("no mail\n%s", r.failedTasks())
	}
	m, err := mail.ReadMessage(bytes.NewReader(smtp.Mails()[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Header.Get("Subject"), "[Herald] Open: Host down: h1.example.com:27017, project prod (organization acme)"; got != want {
		t.Errorf("Subject %q, want %q", got, want)
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	parts := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		b, _ := io.ReadAll(p)
		mt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		parts[mt] = strings.ReplaceAll(string(b), "\r\n", "\n")
	}
	plain, html := parts["text/plain"], parts["text/html"]
	if !strings.HasPrefix(plain, "Alert opened: Host down: h1.example.com:27017\nProject: prod (organization acme)\nOpen since ") {
		t.Errorf("plain part:\n%s", plain)
	}
	for _, label := range []string{"Acknowledge for 1 hour", "Acknowledge for 4 hours", "View the alert"} {
		_, rest, ok := strings.Cut(plain, "\n"+label+": https://herald.example.com/act/")
		token, _, _ := strings.Cut(rest, "\n")
		c, err := keys.Verify(token, time.Now())
		if !ok || err != nil || c.Recipient != "ana" || c.Group != r.project {
			t.Errorf("%s: token %q for %+v (%v), want one made for ana", label, token, c, err)
		}
		if !strings.Contains(html, `href="https://herald.example.com/act/`+token+`"`) || !strings.Contains(html, ">"+label+"</a>") {
			t.Errorf("the HTML part has no button %q", label)
		}
	}
	if strings.Contains(plain, "Withdraw") {
		t.Error("an open alert's mail offers to withdraw an acknowledgement")
	}
}
