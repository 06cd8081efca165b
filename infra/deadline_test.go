package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
)

// TestFunctionTimeoutsLeaveTheResponseMargin reads every function's timeout
// from the synthesized template: a function with routes runs at least
// httpapi.ResponseMargin past its request deadline (so a request past its
// deadline still gets the JSON 500 with request_id, and its api_errors
// write is done, before Lambda ends the invocation), and within API
// Gateway's 30 s integration timeout.
func TestFunctionTimeoutsLeaveTheResponseMargin(t *testing.T) {
	s := defaultSynth(t)
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		for _, f := range Functions {
			_, fn := functionResource(t, s.json[name], f.Name)
			secs, _ := props(fn)["Timeout"].(float64)
			timeout := time.Duration(secs) * time.Second
			if len(f.Routes) == 0 {
				if timeout != f.Timeout {
					t.Errorf("%s %s: timeout %s, want %s", name, f.Name, timeout, f.Timeout)
				}
				continue
			}
			if f.Deadline <= 0 {
				t.Errorf("%s %s: serves routes with no request deadline", name, f.Name)
			}
			if timeout < f.Deadline+httpapi.ResponseMargin || timeout > maxAPITimeout {
				t.Errorf("%s %s: timeout %s, want from the deadline %s plus %s to %s",
					name, f.Name, timeout, f.Deadline, httpapi.ResponseMargin, maxAPITimeout)
			}
		}
	}
}

// TestDeadlinesMatchTheCode holds each HTTP function's Deadline against
// its main.go: the ones that give httpapi.Config httpapi.AgentDeadline have
// it, the others serve with httpapi.DefaultDeadline (the zero value's).
// A main sets its handler's deadline in its httpapi.Config, as a field of
// the literal or by assigning the field of the shared one.
var (
	agentDeadline = regexp.MustCompile(`\bDeadline\s*[:=]\s*httpapi\.AgentDeadline\b`)
	anyDeadline   = regexp.MustCompile(`\bDeadline\s*[:=][^=]`)
)

func TestDeadlinesMatchTheCode(t *testing.T) {
	for _, f := range Functions {
		if len(f.Routes) == 0 && !f.DefaultRoute {
			continue
		}
		src, err := os.ReadFile(filepath.Join("..", "functions", f.Name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		want := httpapi.DefaultDeadline
		if agentDeadline.Match(src) {
			want = httpapi.AgentDeadline
		} else if anyDeadline.Match(src) {
			t.Errorf("%s: main.go sets a deadline this test does not know", f.Name)
		}
		if f.Deadline != want {
			t.Errorf("%s: Deadline %s, its main.go serves with %s", f.Name, f.Deadline, want)
		}
	}
}

// TestTwilioCallbacksAnswerWithinTwiliosLimit: the function serving
// Twilio's callbacks gives them twilio.CallbackDeadline, under Twilio's 15
// s first-byte limit, and its timeout covers that deadline with the
// response margin (the routes' own deadline is shorter than the
// function's, never longer).
func TestTwilioCallbacksAnswerWithinTwiliosLimit(t *testing.T) {
	if twilio.CallbackDeadline >= twilio.FirstByteLimit {
		t.Fatalf("callback deadline %s, Twilio hangs up at %s", twilio.CallbackDeadline, twilio.FirstByteLimit)
	}
	s := defaultSynth(t)
	served := 0
	for _, f := range Functions {
		if !slices.ContainsFunc(f.Routes, func(r Route) bool { return strings.HasPrefix(r.Path, "/v1/telephony/twilio/") }) {
			continue
		}
		served++
		if f.Deadline < twilio.CallbackDeadline {
			t.Errorf("%s: deadline %s is shorter than the callbacks' %s", f.Name, f.Deadline, twilio.CallbackDeadline)
		}
		for _, r := range Regions {
			_, fn := functionResource(t, s.json["VoiceOps-"+r.Name], f.Name)
			secs, _ := props(fn)["Timeout"].(float64)
			if timeout := time.Duration(secs) * time.Second; timeout < twilio.CallbackDeadline+httpapi.ResponseMargin {
				t.Errorf("%s %s: timeout %s, want at least %s", r.Name, f.Name, timeout, twilio.CallbackDeadline+httpapi.ResponseMargin)
			}
		}
	}
	if served != 1 {
		t.Errorf("%d functions serve Twilio's callbacks, want 1", served)
	}
}
