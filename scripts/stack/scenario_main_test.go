//go:build stack

// The scenarios run on the whole stack: `go test -tags stack ./scripts/stack`
// (scripts/stack-test.sh; STACK_ASSEMBLY names a cloud assembly to reuse,
// else the app is synthesized). They are behind a build tag because they
// build every function and run them under the RIE on moto: the plain
// `go test ./...` would pay that in every package run.
package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

var st *Stack

// twilioStandIn is the local Twilio API the dialer calls (its handler is
// set by the test that places a call).
var twilioStandIn = &swappable{}

type swappable struct {
	mu sync.Mutex
	h  http.HandlerFunc
}

func (s *swappable) set(h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = h
}

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.mu.Unlock()
	if h == nil {
		http.Error(w, "no test is placing calls", http.StatusServiceUnavailable)
		return
	}
	h(w, r)
}

func TestMain(m *testing.M) {
	ctx := context.Background()
	twilioSrv := httptest.NewServer(twilioStandIn)
	defer twilioSrv.Close()
	// The template as deployed by default (its own alarm topic, notified
	// on ALARM and OK), but for one Bedrock model allowed (the Bedrock
	// scenario's); the alarms run sixty times faster: a 5-minute period is
	// 5 s.
	o := options{telephony: telephonyTwilio, alarmTimeScale: 60, context: map[string]string{"bedrockModels": bedrockModel},
		twilioAPIURL: twilioSrv.URL, region: "us", assembly: os.Getenv("STACK_ASSEMBLY"), studioAddr: "127.0.0.1:0", baseAddr: "127.0.0.1:0",
		scheduleEvery: 2 * time.Second, allowLoopback: true, retrySchedule: "0s,1s,2s", cache: os.Getenv("STACK_CACHE"), root: "../..", concurrency: 4}
	if o.cache == "" {
		dir, _ := os.UserCacheDir()
		o.cache = dir + "/voiceops-stack"
	}
	start := time.Now()
	s, err := Start(ctx, o, os.Getenv, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the stack:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "stack up in %.1f s (function logs in %s)\n", time.Since(start).Seconds(), s.LogDir)
	st = s
	// The package's moto tests run on the stack's moto when no other is
	// named: none may skip.
	if os.Getenv(awstest.EndpointEnv) == "" {
		os.Setenv(awstest.EndpointEnv, s.MotoURL)
	}
	code := m.Run()
	s.Report(os.Stderr, os.Getenv("STACK_UNUSED_GRANTS") != "")
	s.Close()
	if code == 0 {
		os.RemoveAll(s.LogDir) // kept when something failed
	}
	os.Exit(code)
}

// scenarioClient makes the scenarios' HTTP calls: a call the stack never
// answers (the HTTP API's own ceiling is 30 s) fails the test that made
// it, not the whole suite at its timeout.
var scenarioClient = &http.Client{Timeout: 2 * time.Minute}

// call makes a request and decodes a JSON answer into out (when not nil).
func call(t testing.TB, method, url string, headers map[string]string, body any, out any) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := scenarioClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, resp.Header, b
}

// receiver is a local webhook endpoint that verifies both signature
// schemes of every delivery (as scripts/receiver does).
type receiver struct {
	mu       sync.Mutex
	secret   string
	wh       *standardwebhooks.Webhook
	fail     bool
	got      chan delivery
	failures int
}

type delivery struct {
	EventType string `json:"event_type"`
	EventID   string // X-Service-Event-ID: the alert event's ID
	At        time.Time
	Body      []byte
	Verified  error
}

func newReceiver() *receiver { return &receiver{got: make(chan delivery, 100)} }

func (rc *receiver) setSecret(s string) error {
	wh, err := standardwebhooks.NewWebhook(s)
	if err != nil {
		return err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secret, rc.wh = s, wh
	return nil
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	wh, secret, fail := rc.wh, rc.secret, rc.fail
	if fail {
		rc.failures++
	}
	rc.mu.Unlock()
	d := delivery{At: at, Body: body, EventID: r.Header.Get("X-Service-Event-ID")}
	_ = json.Unmarshal(body, &d)
	if wh == nil {
		d.Verified = fmt.Errorf("no secret yet")
	} else if err := wh.Verify(body, r.Header); err != nil {
		d.Verified = fmt.Errorf("webhook-signature: %w", err)
	} else {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Header.Get("X-Service-Timestamp") + "." + string(body)))
		want := hex.EncodeToString(mac.Sum(nil))
		d.Verified = fmt.Errorf("X-Service-Signature does not match")
		for _, sig := range strings.Fields(r.Header.Get("X-Service-Signature")) {
			if hmac.Equal([]byte(sig), []byte(want)) {
				d.Verified = nil
			}
		}
	}
	// A delivery nobody reads any more must not hold the handler: the
	// test's server waits, when it closes, for every handler to return.
	select {
	case rc.got <- d:
	case <-r.Context().Done():
		return
	}
	if fail {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// next waits for the next delivery of an event type.
func (rc *receiver) next(t testing.TB, eventType string, within time.Duration) delivery {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case d := <-rc.got:
			if d.EventType == eventType {
				return d
			}
		case <-deadline:
			t.Fatalf("no %s delivery within %s", eventType, within)
		}
	}
}
