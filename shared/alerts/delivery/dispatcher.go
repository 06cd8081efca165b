package delivery

import (
	"context"
	"errors"
	"fmt"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/tracing"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/alerts/notify"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// LeaseMargin is added to an endpoint's timeout to make the lease of a
// claimed attempt: how long the attempt belongs to its claimer. The request
// itself never outlasts the timeout (it is the attempt's deadline); the
// margin covers the claimer's clock and its writing of the result (one
// conditional write, retried a few times). So a dispatcher that dies during
// an attempt delays the delivery by at most timeout + 10 s (40 s at the
// largest timeout_ms), plus the queue's delay rounding (SQS: up to 1 s).
// A result written later than that finds its attempt taken over and drops;
// the receiver may then see the event twice (under the same webhook-id).
const LeaseMargin = 10 * time.Second

// leaseFor returns the lease of an attempt to an endpoint with timeoutMS.
func leaseFor(timeoutMS int64) time.Duration {
	timeout := time.Duration(timeoutMS) * time.Millisecond
	if timeout <= 0 {
		timeout = webhook.DefaultTimeout
	}
	return timeout + LeaseMargin
}

// Config holds what a Dispatcher needs.
type Config struct {
	// Stores must have Endpoints, Events and Deliveries.
	Stores voiceops.Stores
	// Queue receives the next attempts.
	Queue queue.Queue
	// Sender makes the HTTP requests (its options decide about loopback).
	Sender *webhook.Sender
	// Schedule of the attempts; webhook.DefaultSchedule when nil.
	Schedule webhook.Schedule
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Rand gives the jitter of the retry delays (webhook.Schedule.NextDelay);
	// math/rand when nil.
	Rand func() float64
	// Lease, when set, is the lease of every attempt (tests); when zero, an
	// attempt's lease is its endpoint's timeout plus LeaseMargin.
	Lease time.Duration
	// Logger hears every dropped message and every attempt; slog.Default()
	// when nil.
	Logger *slog.Logger
	// Telemetry receives the delivery metrics; none when nil.
	Telemetry telemetry.Recorder
	// Tracer traces each POST (X-Ray); nil: none.
	Tracer *tracing.Tracer
	// ConsoleURL is the console's address (https://host/console/), linked
	// from Slack and PagerDuty messages; "" for no link.
	ConsoleURL string
}

// Dispatcher makes queued delivery attempts. It is safe for concurrent use.
type Dispatcher struct {
	*Outbox
	sender   *webhook.Sender
	schedule webhook.Schedule
	rand     func() float64
	lease    time.Duration
	log      *slog.Logger
	metrics  telemetry.Recorder
	tracer   *tracing.Tracer
	console  string
}

// NewDispatcher returns a Dispatcher.
func NewDispatcher(c Config) *Dispatcher {
	d := &Dispatcher{
		Outbox: NewOutbox(c.Stores, c.Queue, c.Now),
		sender: c.Sender, schedule: c.Schedule, rand: c.Rand, lease: c.Lease, log: c.Logger,
		metrics: telemetry.Or(c.Telemetry), tracer: c.Tracer, console: c.ConsoleURL,
	}
	if d.schedule == nil {
		d.schedule = webhook.DefaultSchedule
	}
	if d.log == nil {
		d.log = slog.Default()
	}
	return d
}

// interruptedError is the log's text for an attempt whose claimer stopped
// before recording a result.
const interruptedError = "interrupted: the dispatcher stopped before recording a result"

// recordTries is how many times a result is written before giving up (the
// message then comes back, and finds the attempt claimed).
const recordTries = 3

// Handle makes the attempt m asks for, if it is still to be made (see the
// package comment for the protocol). It returns an error only for a
// transient failure of the stores or the queue, so that the message comes
// back; everything the receiver answers, and every duplicate or stale
// message, is handled and returns nil.
func (d *Dispatcher) Handle(ctx context.Context, m queue.Message) error {
	ctx = tracing.Annotate(ctx, "delivery_id", m.DeliveryID)
	now := d.now()
	if wait := m.Remaining(now); wait > 0 {
		// Back from a hop of at most 15 minutes, with more to wait.
		return d.queue.Send(ctx, m, wait)
	}
	dl, err := d.deliveries.GetDelivery(ctx, m.AccountID, m.EndpointID, m.DeliveryID)
	if errors.Is(err, voiceops.ErrNotFound) {
		d.drop(m, "no such delivery")
		return nil
	}
	if err != nil {
		return err
	}
	n := len(dl.Attempts)
	switch {
	case m.Attempt < 1:
		d.drop(m, "no attempt number")
		return nil
	case dl.EventID != m.EventID:
		d.drop(m, "the delivery is of another event")
		return nil
	case dl.Status != voiceops.DeliveryPending:
		d.drop(m, "the delivery is "+string(dl.Status))
		return nil
	case n == m.Attempt-1 && m.Check:
		d.drop(m, "a check copy never makes an attempt")
		return nil
	case n == m.Attempt-1:
		return d.attempt(ctx, m, dl)
	case n == m.Attempt && dl.Attempts[n-1].Open():
		lease, err := d.leaseOf(ctx, m)
		if err != nil {
			return err
		}
		claimed := dl.Attempts[n-1].At
		if age := now.Sub(claimed); age < lease {
			// Another copy of this message is making the attempt. Look
			// again once its lease has passed, in case its claimer dies.
			return d.queue.Send(ctx, m, lease-age)
		}
		d.log.Warn("webhook attempt interrupted", "delivery_id", dl.ID, "attempt", m.Attempt, "claimed_at", claimed)
		a := &dl.Attempts[n-1]
		a.Error = interruptedError
		a.DurationMS = now.Sub(claimed).Milliseconds()
		return d.finish(ctx, m, dl, webhook.Retry, 0)
	case n == m.Attempt && m.Check:
		// The claimer recorded its result and queued what follows (or
		// its own message, coming back, repairs that).
		d.drop(m, "the attempt was recorded")
		return nil
	case n == m.Attempt:
		// The result of this attempt is recorded and the delivery still
		// pending: the next attempt may never have been queued.
		return d.queueNext(ctx, m, dl)
	default:
		d.drop(m, fmt.Sprintf("stale: the delivery has %d attempts", n))
		return nil
	}
}

// leaseOf returns the lease of the attempt m asks for: its endpoint's
// timeout plus LeaseMargin (the largest timeout's when the endpoint is
// gone), unless the Config fixed it.
func (d *Dispatcher) leaseOf(ctx context.Context, m queue.Message) (time.Duration, error) {
	if d.lease > 0 {
		return d.lease, nil
	}
	ep, err := d.endpoints.GetEndpoint(ctx, m.AccountID, m.EndpointID)
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return leaseFor(voiceops.MaxTimeoutMS), nil
	case err != nil:
		return 0, err
	}
	return leaseFor(ep.TimeoutMS), nil
}

func (d *Dispatcher) drop(m queue.Message, why string) {
	d.log.Info("webhook message dropped", "delivery_id", m.DeliveryID, "attempt", m.Attempt, "reason", why)
}

// attempt claims attempt m.Attempt of dl, sends it and records the result.
func (d *Dispatcher) attempt(ctx context.Context, m queue.Message, dl voiceops.Delivery) error {
	n := len(dl.Attempts)
	ep, err := d.endpoints.GetEndpoint(ctx, m.AccountID, m.EndpointID)
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return d.stop(ctx, m, dl, voiceops.DeliverySkipped, "the endpoint was deleted")
	case err != nil:
		return err
	case !ep.Enabled:
		return d.stop(ctx, m, dl, voiceops.DeliverySkipped, "the endpoint is disabled")
	}
	ev, err := d.events.GetEvent(ctx, m.AccountID, m.EventID)
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return d.stop(ctx, m, dl, voiceops.DeliveryFailed, "the event has expired")
	case err != nil:
		return err
	}
	if m.Attempt == 1 && !m.Manual {
		// How long the event took to reach its first attempt: the fan-out
		// and the queue's wait (telemetry.PendingEventAge).
		d.metrics.Record(telemetry.PendingEventAge, float64(max(d.now().Sub(ev.CreatedAt), 0).Milliseconds()), telemetry.SourceDispatch)
	}

	// Before claiming, queue the copy that judges the claim once its lease
	// has passed: every claim has one, so a dispatcher that dies during the
	// attempt delays the delivery by the lease, not by the queue's
	// visibility timeout. If this send fails, nothing is claimed yet.
	lease := d.lease
	if lease <= 0 {
		lease = leaseFor(ep.TimeoutMS)
	}
	check := m
	check.Check, check.NotBefore = true, time.Time{}
	if err := d.queue.Send(ctx, check, lease); err != nil {
		return err
	}

	// Claim: from here on, no other copy of m can send this attempt.
	at := d.now()
	dl.Attempts = append(dl.Attempts, voiceops.DeliveryAttempt{Number: m.Attempt, At: at})
	dl.NextAttemptAt, dl.UpdatedAt = nil, at
	switch err := d.deliveries.RecordAttempt(ctx, dl, n); {
	case errors.Is(err, voiceops.ErrConflictingWrite), errors.Is(err, voiceops.ErrNotFound):
		d.drop(m, "claimed by another copy")
		return nil
	case err != nil:
		return err
	}

	body, err := notify.Body(ep, ev.Body, d.console)
	if err != nil {
		// A stored body that is no event never becomes one: no retry.
		a := &dl.Attempts[n]
		a.Error = "the event cannot be rendered for a " + string(ep.Kind) + " endpoint"
		d.log.Error("webhook attempt not rendered", "delivery_id", dl.ID, "event_id", ev.ID, "error", err)
		return d.finish(ctx, m, dl, webhook.Failed, 0)
	}
	sctx, seg := d.tracer.Begin(ctx, traceName(ep.URL), "remote")
	res := d.sender.Send(sctx, webhook.Attempt{
		URL: ep.URL, Headers: ep.Headers, Body: body, EventID: ev.ID,
		Secrets: ep.ValidSecrets(at), Timeout: time.Duration(ep.TimeoutMS) * time.Millisecond,
		Unsigned: !ep.Signed(),
	})
	seg.SetHTTP(http.MethodPost, traceURL(ep.URL), res.StatusCode)
	seg.End(res.StatusCode, errorOf(res.Error))
	d.metrics.Record(telemetry.DeliveryAttempts, 1, string(res.Outcome))
	d.metrics.Record(telemetry.DeliveryLatency, float64(res.Duration.Microseconds())/1000, string(res.Outcome))
	a := &dl.Attempts[n]
	a.StatusCode, a.DurationMS, a.Error = res.StatusCode, res.Duration.Milliseconds(), res.Error
	if a.Open() {
		a.Error = "no response" // never left open: Open() marks a claim
	}
	d.log.Info("webhook attempt", "delivery_id", dl.ID, "event_id", ev.ID, "endpoint_id", ep.ID, "attempt", m.Attempt,
		"status_code", res.StatusCode, "duration_ms", a.DurationMS, "outcome", string(res.Outcome), "error", res.Error)
	return d.finish(ctx, m, dl, res.Outcome, res.RetryAfter)
}

// stop ends a delivery without an attempt.
func (d *Dispatcher) stop(ctx context.Context, m queue.Message, dl voiceops.Delivery, status voiceops.DeliveryStatus, why string) error {
	d.log.Info("webhook delivery stopped", "delivery_id", dl.ID, "status", string(status), "reason", why)
	dl.Status, dl.NextAttemptAt, dl.UpdatedAt = status, nil, d.now()
	err := d.deliveries.RecordAttempt(ctx, dl, len(dl.Attempts))
	if errors.Is(err, voiceops.ErrConflictingWrite) || errors.Is(err, voiceops.ErrNotFound) {
		d.drop(m, "changed meanwhile")
		return nil
	}
	return err
}

// finish records the outcome of the last attempt of dl (already filled
// in) and queues the next attempt when there is one.
func (d *Dispatcher) finish(ctx context.Context, m queue.Message, dl voiceops.Delivery, o webhook.Outcome, retryAfter time.Duration) error {
	now := d.now()
	dl.UpdatedAt, dl.NextAttemptAt = now, nil
	var delay time.Duration
	switch o {
	case webhook.Delivered:
		dl.Status = voiceops.DeliveryDelivered
	case webhook.Retry:
		dl.Status = voiceops.DeliveryFailed
		if next, ok := d.schedule.NextDelay(m.Attempt, retryAfter, d.rand); ok && !m.Manual {
			due := now.Add(next)
			dl.Status, dl.NextAttemptAt, delay = voiceops.DeliveryPending, &due, next
			d.metrics.Record(telemetry.RetriesScheduled, 1)
		}
	default:
		dl.Status = voiceops.DeliveryFailed
	}
	// The result is written whatever ctx says: the request went out.
	wctx := context.WithoutCancel(ctx)
	var err error
	for range recordTries {
		err = d.deliveries.RecordAttempt(wctx, dl, m.Attempt)
		if err == nil || errors.Is(err, voiceops.ErrConflictingWrite) || errors.Is(err, voiceops.ErrNotFound) {
			break
		}
	}
	switch {
	case errors.Is(err, voiceops.ErrConflictingWrite), errors.Is(err, voiceops.ErrNotFound):
		// Closed as interrupted by another copy after our lease ran out;
		// that copy has scheduled what follows.
		d.drop(m, "the attempt was closed by another copy")
		return nil
	case err != nil:
		return err
	}
	if dl.Status != voiceops.DeliveryPending {
		return nil
	}
	return d.queue.Send(wctx, d.next(m), delay)
}

// queueNext queues the attempt after m's again, due at dl.NextAttemptAt.
func (d *Dispatcher) queueNext(ctx context.Context, m queue.Message, dl voiceops.Delivery) error {
	var delay time.Duration
	if dl.NextAttemptAt != nil {
		delay = max(dl.NextAttemptAt.Sub(d.now()), 0)
	}
	return d.queue.Send(ctx, d.next(m), delay)
}

func (d *Dispatcher) next(m queue.Message) queue.Message {
	return queue.Message{
		AccountID: m.AccountID, EndpointID: m.EndpointID, EventID: m.EventID, DeliveryID: m.DeliveryID, Attempt: m.Attempt + 1,
	}
}

// HandleSQS is the dispatcher Lambda's handler: it handles every record of
// the batch at once (so a slow endpoint cannot hold up the rest past the
// function's timeout) and reports the records to receive again, those
// malformed or whose handling failed transiently, as batch item failures.
// Malformed records come back until the queue's redrive policy moves them
// to the dead-letter queue, where they can be inspected.
func (d *Dispatcher) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	failed := make([]bool, len(ev.Records))
	var wg sync.WaitGroup
	for i, r := range ev.Records {
		wg.Go(func() {
			m, err := queue.Decode([]byte(r.Body))
			if err == nil {
				err = d.Handle(ctx, m)
			}
			if err != nil {
				d.log.Error("webhook message failed", "message_id", r.MessageId, "error", err)
				failed[i] = true
			}
		})
	}
	wg.Wait()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, f := range failed {
		if f {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp, nil
}
