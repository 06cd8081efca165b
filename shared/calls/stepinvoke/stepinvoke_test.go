package stepinvoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/calls"
)

type recorder struct {
	function string
	payload  []byte
}

func (r *recorder) InvokeEvent(_ context.Context, function string, payload []byte) error {
	r.function, r.payload = function, payload
	return nil
}

var claimedAt = time.Date(2026, 11, 28, 10, 0, 0, 123456789, time.UTC)

// TestHandoffThenHandler: the handoff's event names the step only, and
// the handler runs that step with it; an API Gateway request goes to the
// API, and a failed step is the invocation's error.
func TestHandoffThenHandler(t *testing.T) {
	rec := &recorder{}
	j := calls.StepJob{SID: "CA0123456789abcdef0123456789abcdef", Step: 3, ClaimedAt: claimedAt}
	if err := Handoff(rec, "voiceops-calls")(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	var fields map[string]map[string]any
	if err := json.Unmarshal(rec.payload, &fields); err != nil || rec.function != "voiceops-calls" || len(fields) != 1 || len(fields["call_step"]) != 3 {
		t.Fatalf("event to %q: %s (%v), want call_step with sid, step, claimed_at only", rec.function, rec.payload, err)
	}
	var ran []calls.StepJob
	var runErr error
	apiCalls := 0
	var logs bytes.Buffer
	now := func() time.Time { return claimedAt.Add(250 * time.Millisecond) }
	h := Handler(func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		apiCalls++
		return events.APIGatewayV2HTTPResponse{StatusCode: 204}, nil
	}, func(_ context.Context, got calls.StepJob) error { ran = append(ran, got); return runErr }, slog.New(slog.NewJSONHandler(&logs, nil)), now)

	if out, err := h(context.Background(), rec.payload); err != nil || out != nil || len(ran) != 1 || ran[0] != j || apiCalls != 0 {
		t.Fatalf("step event: %v %v, ran %+v, API %d", out, err, ran, apiCalls)
	}
	if !strings.Contains(logs.String(), `"queued_ms":250`) || !strings.Contains(logs.String(), j.SID) {
		t.Errorf("log of the run: %s", logs.String())
	}
	out, err := h(context.Background(), json.RawMessage(`{"version":"2.0","routeKey":"POST /v1/x","rawPath":"/v1/x","requestContext":{"http":{"method":"POST"}}}`))
	if resp, ok := out.(events.APIGatewayV2HTTPResponse); err != nil || !ok || resp.StatusCode != 204 || apiCalls != 1 || len(ran) != 1 {
		t.Errorf("API event: %#v %v, API %d, runs %d", out, err, apiCalls, len(ran))
	}
	runErr = calls.ErrStepNotOurs
	if _, err := h(context.Background(), rec.payload); err != nil {
		t.Errorf("a step no longer the job's is no failure: %v", err)
	}
	runErr = errors.New("the agent failed")
	if _, err := h(context.Background(), rec.payload); err == nil {
		t.Errorf("a failed step is not the invocation's error")
	}
}
