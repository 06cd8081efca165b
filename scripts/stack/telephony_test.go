package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

type fixedTwilio twilio.Account

func (f fixedTwilio) Twilio(context.Context, string) (twilio.Account, error) {
	return twilio.Account(f), nil
}

// callbacks records the signed callbacks the stand-in posts, by call.
type callbacks struct {
	mu  sync.Mutex
	got map[string][]string // call SID → "answer", "turn" or the status
	bad []string
}

func (c *callbacks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	full := "http://" + r.Host + r.URL.RequestURI()
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/telephony/twilio/"), "/")
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Header.Get("X-Twilio-Signature") != twiliofake.Sign(twiliofake.AuthToken, full, r.PostForm) {
		c.bad = append(c.bad, full)
	}
	sid, what := parts[0], parts[len(parts)-1]
	switch what {
	case "status":
		c.got[sid] = append(c.got[sid], r.PostForm.Get("CallStatus"))
	case "answer":
		c.got[sid] = append(c.got[sid], "answer")
		_, _ = io.WriteString(w, `<Response><Gather input="speech" action="http://`+r.Host+`/v1/telephony/twilio/`+sid+`/turn"/></Response>`)
	default:
		c.got[sid] = append(c.got[sid], "turn:"+r.PostForm.Get("SpeechResult"))
		_, _ = io.WriteString(w, `<Response><Say>ok</Say></Response>`)
	}
}

func (c *callbacks) of(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.got[sid], " ")
}

// The stand-in takes the dialer's create-call request (the real Twilio
// adapter) and plays the call back, signed: an ordinary number is answered
// and talks; a test number ends as the simulator's does.
func TestStandInPlaysCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api, err := startStandIn(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	cb := &callbacks{got: map[string][]string{}}
	srv := httptest.NewServer(cb)
	defer srv.Close()
	p := &twilio.Provider{Creds: fixedTwilio(standInAccount), APIBaseURL: api, CallbackBaseURL: srv.URL}
	for sid, to := range map[string]string{"CAok": "+14155550100", "CAbusy": "+14155550001", "CAnoanswer": "+14155550002"} {
		if err := p.Place(ctx, telephony.CallRequest{SID: sid, AccountID: "acct_demo1", To: to}); err != nil {
			t.Fatalf("placing %s: %v", to, err)
		}
	}
	want := map[string]string{"CAok": "ringing answer turn:balance completed", "CAbusy": "busy", "CAnoanswer": "no-answer"}
	deadline := time.Now().Add(10 * time.Second)
	for sid, w := range want {
		for cb.of(sid) != w && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if got := cb.of(sid); got != w {
			t.Errorf("call %s: callbacks %q, want %q", sid, got, w)
		}
	}
	if len(cb.bad) != 0 {
		t.Errorf("callbacks with a wrong signature: %v", cb.bad)
	}
}

// -telephony takes the two modes; the stand-in takes no Twilio URL.
func TestTelephonyFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"-telephony", "twilio", "-twilio-api-url", "http://127.0.0.1:1"}, true},
		{[]string{"-twilio-api-url", "http://127.0.0.1:1"}, false},
		{[]string{"-telephony", "simulator"}, false},
		{[]string{"-alarm-time-scale", "0"}, false},
		{[]string{"-context", "alarmTopicArn"}, false},
	} {
		o, err := parseFlags(tt.args, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("%v: %v, want ok %v", tt.args, err, tt.ok)
		}
		if tt.args == nil && (o.telephony != telephonyStandIn || o.alarmTimeScale != 1) {
			t.Errorf("defaults %+v", o)
		}
	}
}

// TestLocalEnv: the runner's flags reach the functions only as the
// local-only variables, on top of the template's environment.
func TestLocalEnv(t *testing.T) {
	o, err := parseFlags([]string{"-allow-loopback-webhooks", "-retry-schedule", "0s,1s", "-conversation-idle-timeout", "4s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	template := map[string]string{"CONFIG_TABLE": "voiceops-us-config"}
	env := localEnv(o, template, "")
	for k, want := range map[string]string{"CONFIG_TABLE": "voiceops-us-config", lambdamain.LocalLoopbackEnv: "true",
		lambdamain.LocalRetryScheduleEnv: "0s,1s", lambdamain.LocalChatIdleTimeoutEnv: "4s"} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	if len(template) != 1 {
		t.Errorf("the template's environment changed: %v", template)
	}
	d, _ := parseFlags(nil, io.Discard)
	if env := localEnv(d, template, ""); len(env) != 1 {
		t.Errorf("without flags: %v", env)
	}
}
