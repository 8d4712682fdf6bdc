package api

import (
	"net/url"
	"testing"
	"time"
)

// The chat service's signature check, on the service's documented example: the example
// passes at its own time; a changed body, timestamp, secret or signature, a timestamp more
// than 5 minutes either way, or none, is refused.
func TestCheckChatBSignature(t *testing.T) {
	const (
		secret = "8f742231b10e8888abcd99yyyzzz85a5"
		ts     = "1531420618"
		sig    = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
		body   = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	)
	at := time.Unix(1531420618, 0)
	for _, c := range []struct {
		name                  string
		secret, ts, sig, body string
		now                   time.Time
		want                  error
	}{
		{"the documented example", secret, ts, sig, body, at, nil},
		{"4 minutes later", secret, ts, sig, body, at.Add(4 * time.Minute), nil},
		{"6 minutes later", secret, ts, sig, body, at.Add(6 * time.Minute), errChatBStale},
		{"6 minutes earlier", secret, ts, sig, body, at.Add(-6 * time.Minute), errChatBStale},
		{"no timestamp", secret, "", sig, body, at, errChatBStale},
		{"a timestamp not a number", secret, "1531420618.5", sig, body, at, errChatBStale},
		{"another timestamp", secret, "1531420619", sig, body, at, errChatBSignature},
		{"a changed body", secret, ts, sig, body + "&x=1", at, errChatBSignature},
		{"another secret", secret + "x", ts, sig, body, at, errChatBSignature},
		{"no signature", secret, ts, "", body, at, errChatBSignature},
		{"without v0=", secret, ts, sig[3:], body, at, errChatBSignature},
		{"upper-case hex", secret, ts, "v0=A2114D57B48EAC39B9AD189DD8316235A7B4A8D21A10BD27519666489C69B503", body, at, errChatBSignature},
	} {
		if got := checkChatBSignature([]byte(c.secret), c.ts, c.sig, []byte(c.body), c.now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// The SMS gateway's signature, on its documented examples (the values of one name sorted, each once):
// any change of URL, parameter or token is refused.
func TestCheckTwilioSignature(t *testing.T) {
	const (
		token  = "12345"
		full   = "https://mycompany.com/myapp.php?foo=1&bar=2"
		sig    = "RSOYDt4T1cUTdK1PDd93/VVr8B8="
		sigRep = "IK+Dwps556ElfBT0I3Rgjkr1wJU="
	)
	params := url.Values{"CallSid": {"CA1234567890ABCDE"}, "Caller": {"+14158675309"}, "Digits": {"1234"},
		"From": {"+14158675309"}, "To": {"+18005551212"}}
	with := func(name, value string) url.Values {
		p := url.Values{}
		for k, v := range params {
			p[k] = v
		}
		p.Set(name, value)
		return p
	}
	repeated := url.Values{"Sid": {"CA123"}, "SidAccount": {"AC123"}, "Digits": {"5678", "1234", "1234"}}
	for _, c := range []struct {
		name, token, url, sig string
		params                url.Values
		want                  bool
	}{
		{"the documented example", token, full, sig, params, true},
		{"repeated values", token, full, sigRep, repeated, true},
		{"another URL", token, full + "&x=1", sig, params, false},
		{"http rather than https", token, "http://mycompany.com/myapp.php?foo=1&bar=2", sig, params, false},
		{"a changed parameter", token, full, sig, with("Digits", "9999"), false},
		{"an added parameter", token, full, sig, with("Body", "1"), false},
		{"another token", "54321", full, sig, params, false},
		{"no signature", token, full, "", params, false},
	} {
		if got := checkTwilioSignature(c.token, c.url, c.sig, c.params); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A clicked message is updated only at the chat service's hooks host over https, or at the
// service address the operator set; never at an address a payload names otherwise.
func TestChatBResponseURL(t *testing.T) {
	s := &Server{cfg: Config{ChatBURL: "http://127.0.0.1:8089"}}
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"https://hooks.slack.com/actions/T1/123/abc", true},
		{"http://hooks.slack.com/actions/T1/123/abc", false},
		{"https://hooks.slack.com.evil.example/actions", false},
		{"https://user@hooks.slack.com/actions", false},
		{"https://evil.example/actions", false},
		{"http://127.0.0.1:8089/actions/T1", true},
		{"http://127.0.0.1:8090/actions/T1", false},
		{"https://127.0.0.1:8089/actions/T1", false},
		{"http://169.254.169.254/latest/meta-data", false},
		{"", false},
		{"/actions/T1", false},
	} {
		if got := s.chatBResponseURL(c.url); got != c.want {
			t.Errorf("%q: %v, want %v", c.url, got, c.want)
		}
	}
}
