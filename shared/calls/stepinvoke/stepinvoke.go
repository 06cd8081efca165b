// Package stepinvoke runs the calls service's claimed steps (the answer
// and the turns of Twilio's callbacks) in an asynchronous invocation of
// the calls function itself, so that a step slower than the callback's
// deadline outlives the callback: on Lambda the response ends the
// invocation, and with it any work left running.
//
// Why an Event invoke of the same function rather than an SQS queue: it
// needs no resource besides one grant (lambda:InvokeFunction on the
// function itself), Lambda queues the event and runs it at once (no
// poller, no batching window, no visibility timeout to size), and a
// failed run must not be retried anyway (the function's
// MaximumRetryAttempts is 0): the step's lease, after which the callee
// is asked again and that callback takes the step over, is the one
// recovery, and a retry beside it could run the step twice. The event
// names the step only (calls.StepJob: IDs and the claim's time); what the
// callee said stays on the claim, and neither is logged.
package stepinvoke

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/calls"
)

// Event is the payload of a step's invocation. An API Gateway event has
// no call_step, so the two are told apart by it alone.
type Event struct {
	CallStep *calls.StepJob `json:"call_step"`
}

// Invoker queues an asynchronous invoke (lambdainvoke.Invoker).
type Invoker interface {
	InvokeEvent(ctx context.Context, function string, payload []byte) error
}

// Handoff is calls.Service.Handoff on Lambda: it queues the step's event
// for the function (its own name, lambdacontext.FunctionName).
func Handoff(inv Invoker, function string) func(context.Context, calls.StepJob) error {
	return func(ctx context.Context, j calls.StepJob) error {
		payload, err := json.Marshal(Event{CallStep: &j})
		if err != nil {
			return err
		}
		return inv.InvokeEvent(ctx, function, payload)
	}
}

// APIHandler is the function's handler of API Gateway's requests.
type APIHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Handler is the function's Lambda handler: a step's event runs the step
// (run: calls.Service.RunStep), anything else is API Gateway's request.
// A step that failed is the invocation's error (Lambda counts it; it is
// not retried); a step that was no longer the job's, or came too late
// to run within its lease, is a log line.
func Handler(api APIHandler, run func(context.Context, calls.StepJob) error, log *slog.Logger, now func() time.Time) func(context.Context, json.RawMessage) (any, error) {
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		var ev Event
		if err := json.Unmarshal(payload, &ev); err == nil && ev.CallStep != nil {
			j := *ev.CallStep
			start := now()
			err := run(ctx, j)
			attrs := []any{"sid", j.SID, "step", j.Step, "queued_ms", start.Sub(j.ClaimedAt).Milliseconds(), "duration_ms", now().Sub(start).Milliseconds()}
			switch {
			case err == nil:
				log.InfoContext(ctx, "call step ran", attrs...)
			case errors.Is(err, calls.ErrStepNotOurs), errors.Is(err, calls.ErrStepLate):
				log.WarnContext(ctx, "call step not run", append(attrs, "reason", err.Error())...)
			default:
				log.ErrorContext(ctx, "call step failed", append(attrs, "error", err.Error())...)
				return nil, err
			}
			return nil, nil
		}
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, err
		}
		return api(ctx, req)
	}
}
