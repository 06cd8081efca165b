package httpapi

import (
	"context"
	"sync"
	"time"
)

// countErrorTimeout bounds the api_errors write of a 5xx (countError).
const countErrorTimeout = 2 * time.Second

// ResponseMargin is the time a function keeps after a request's deadline:
// enough to write the JSON 500 with its request_id and to finish the
// api_errors write of that 500 (countErrorTimeout), with a second to spare
// for the adapter. A function whose timeout left no margin would be killed
// by Lambda at the deadline: the client would get "Task timed out" and the
// metric would be lost.
const ResponseMargin = countErrorTimeout + time.Second

// FunctionTimeout is the timeout of a function whose requests have the
// given deadline: the deadline plus ResponseMargin, in whole seconds (as
// Lambda takes it). infra derives every HTTP function's timeout from it.
func FunctionTimeout(deadline time.Duration) time.Duration {
	return (deadline + ResponseMargin + time.Second - 1).Truncate(time.Second)
}

// requestDeadline is the deadline of a request arriving with ctx at now:
// the configured one, shortened so that ResponseMargin remains before the
// context's own deadline (a Lambda invocation's end). So a function whose
// timeout and configured deadline disagree still answers before it ends.
func requestDeadline(ctx context.Context, configured time.Duration, now time.Time) time.Duration {
	if end, ok := ctx.Deadline(); ok {
		if rest := end.Sub(now) - ResponseMargin; rest < configured {
			return max(rest, 0)
		}
	}
	return configured
}

// pending is the background work of one Lambda invocation, which
// LambdaHandler waits for before it returns: once an invocation has
// answered, Lambda freezes the environment, and work still running (the
// api_errors write of a 500) would be lost or run out of time.
type pending struct{ wg sync.WaitGroup }

type pendingKey struct{}

func withPending(ctx context.Context) (context.Context, *pending) {
	p := &pending{}
	return context.WithValue(ctx, pendingKey{}, p), p
}

// background runs f in the invocation's pending work when ctx has one, else
// with run (Config.Background).
func background(ctx context.Context, run func(func()), f func()) {
	p, ok := ctx.Value(pendingKey{}).(*pending)
	if !ok {
		run(f)
		return
	}
	p.wg.Go(f)
}
