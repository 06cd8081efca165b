package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliocreds"
	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/samples"
	"github.com/voiceops/opsapi/shared/voiceops"
)

type jobs struct {
	mu sync.Mutex
	js []voiceops.DialJob
}

func (q *jobs) SendDial(_ context.Context, j voiceops.DialJob, _ time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.js = append(q.js, j)
	return nil
}

// TestReplaySQSBatch sends each record of events/dialer-sqs-batch.json
// through the real handler: the dial job places the sample call through the
// Twilio adapter (against a local fake Twilio), and the timeout check,
// past its deadline, fails the call that no report ended.
func TestReplaySQSBatch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(samples.Dir(), "dialer-sqs-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created []url.Values
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		created = append(created, form)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"sid":"CAfeedfeedfeedfeedfeedfeedfeedfeed","status":"queued"}`)
	}))
	defer fake.Close()
	m := samples.NewMemory(t)
	d := &dialer.Dialer{Calls: calls.New(m.Calls, time.Now), Pacer: memory.NewPacer(), Queue: &jobs{},
		Provider: &twilio.Provider{Creds: twiliocreds.Static{samples.AccountID: {AccountSID: twiliofake.AccountSID, AuthToken: twiliofake.AuthToken, FromNumber: twiliofake.FromNumber}},
			APIBaseURL: fake.URL, CallbackBaseURL: "https://base.example.com"},
		Now: time.Now, Sleep: dialer.SleepContext, Log: m.Log}
	h := handler(d)
	want := []voiceops.CallStatus{voiceops.CallCalling, voiceops.CallFailure}
	for i, rec := range ev.Records {
		res, err := h(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		if err != nil || len(res.BatchItemFailures) != 0 {
			t.Fatalf("record %d: %v %+v", i, err, res)
		}
		c, err := m.Calls.GetCall(context.Background(), samples.CallSID, time.Now())
		if err != nil || c.Status != want[i] {
			t.Errorf("after record %d: %+v %v", i, c, err)
		}
		if i == 1 && c.Reason != voiceops.ReasonTimeout {
			t.Errorf("timed-out call's reason %q", c.Reason)
		}
	}
	if len(created) != 1 || created[0].Get("To") != "+447911123456" || created[0].Get("From") != "+15005550006" {
		t.Errorf("Twilio got %v", created)
	}
}

func TestRunNeedsItsEnvironment(t *testing.T) {
	if err := run(context.Background(), func(string) string { return "" }); err == nil {
		t.Error("run started without its environment")
	}
}
