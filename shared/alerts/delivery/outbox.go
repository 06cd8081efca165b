// Package delivery moves alert events to webhook endpoints: the Outbox turns
// a stored event into one Delivery per subscribed, enabled endpoint and
// queues their first attempts; the Dispatcher makes each queued attempt,
// keeps the delivery log and queues the next attempt on the retry schedule.
//
// # At least once, never the same attempt twice
//
// The queue delivers every message at least once, so the protocol is built
// on one conditional write: a message asks for attempt N of a delivery, and
// only the receiver whose RecordAttempt moves the stored attempt count from
// N-1 to N (the claim) sends it; every other copy of the message finds the
// count moved and drops. The claim is written before the request is sent,
// the result after it, and the next attempt is queued after that:
//
//   - before claiming, the claimer queues a check copy of the message, due
//     when the claim's lease ends (the endpoint's timeout plus LeaseMargin):
//     if the claimer dies, that copy finds the claim expired without
//     waiting for the queue's visibility timeout; if it lives, the copy
//     finds the attempt recorded and drops;
//   - a copy of the message arriving while the claim is fresh (younger than
//     the lease) is sent back to the queue until the lease has passed;
//   - a claim older than the lease has lost its sender (a request never
//     outlives the endpoint's timeout): the attempt is closed as
//     interrupted, counting as a failed attempt, and the next one is
//     scheduled. It is never sent again under the same number, since
//     nobody knows whether it went out;
//   - a result recorded without its next attempt queued (a crash, or a
//     failed queue send) is repaired by the re-delivery of the message,
//     which queues the next attempt again. Extra copies are harmless: their
//     claims fail.
//
// So a message is acknowledged only when the delivery has reached a state
// from which it moves on by itself, and an attempt number is sent at most
// once.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Outbox fans events out into deliveries and queues their attempts. It
// needs no HTTP client: the evaluator and the webhooks API use it.
type Outbox struct {
	endpoints  voiceops.EndpointStore
	events     voiceops.EventStore
	deliveries voiceops.DeliveryStore
	queue      queue.Queue
	now        func() time.Time
}

// NewOutbox returns an Outbox over the stores' Endpoints, Events and
// Deliveries; now is the clock (time.Now when nil).
func NewOutbox(s voiceops.Stores, q queue.Queue, now func() time.Time) *Outbox {
	if now == nil {
		now = time.Now
	}
	return &Outbox{endpoints: s.Endpoints, events: s.Events, deliveries: s.Deliveries, queue: q, now: now}
}

// Fanout creates the deliveries of a stored event and queues their first
// attempts, then marks the event fanned out. The deliveries go to every
// enabled endpoint of the account subscribed to the event's type or, for a
// test event (EndpointID set), to that endpoint alone, enabled or not (a
// disabled one ends "skipped", so the log shows why nothing arrived).
//
// It is safe to run again for the same event, whole or after failing half
// way: delivery IDs derive from (event, endpoint), existing deliveries are
// left as they are, and a repeated first attempt is dropped by the claim.
// An error leaves the event pending, for the evaluator's repair pass.
func (o *Outbox) Fanout(ctx context.Context, e voiceops.AlertEvent) error {
	var targets []voiceops.WebhookEndpoint
	if e.EndpointID != "" {
		ep, err := o.endpoints.GetEndpoint(ctx, e.AccountID, e.EndpointID)
		switch {
		case errors.Is(err, voiceops.ErrNotFound):
		case err != nil:
			return fmt.Errorf("fan-out of %s: %w", e.ID, err)
		default:
			targets = append(targets, ep)
		}
	} else {
		eps, err := o.endpoints.ListEndpoints(ctx, e.AccountID)
		if err != nil {
			return fmt.Errorf("fan-out of %s: %w", e.ID, err)
		}
		for _, ep := range eps {
			if ep.Enabled && ep.Subscribes(e.Type) {
				targets = append(targets, ep)
			}
		}
	}

	now := o.now()
	ds := make([]voiceops.Delivery, len(targets))
	for i, ep := range targets {
		ds[i] = newDelivery(e, ep.ID, now)
	}
	if len(ds) > 0 {
		if err := o.deliveries.CreateDeliveries(ctx, ds); err != nil {
			return fmt.Errorf("fan-out of %s: %w", e.ID, err)
		}
	}
	return o.queueFirstAttempts(ctx, e, ds)
}

// newDelivery is the pending delivery of e to an endpoint, due now.
func newDelivery(e voiceops.AlertEvent, endpointID string, now time.Time) voiceops.Delivery {
	due := now
	return voiceops.Delivery{
		ID: voiceops.DeliveryID(e.ID, endpointID), AccountID: e.AccountID, EndpointID: endpointID, EventID: e.ID,
		EventType: e.Type, Test: e.EndpointID != "", Status: voiceops.DeliveryPending, NextAttemptAt: &due,
		CreatedAt: now, UpdatedAt: now,
	}
}

// queueFirstAttempts queues the first attempt of each of e's stored
// deliveries, then marks e fanned out. The mark comes only after every
// send has succeeded: marked before, a failed send would leave a
// delivery that nothing queues and the repair pass no longer looks at.
func (o *Outbox) queueFirstAttempts(ctx context.Context, e voiceops.AlertEvent, ds []voiceops.Delivery) error {
	for _, d := range ds {
		if err := o.queue.Send(ctx, firstAttempt(d), 0); err != nil {
			return fmt.Errorf("fan-out of %s: queueing %s: %w", e.ID, d.ID, err)
		}
	}
	if err := o.events.MarkFannedOut(ctx, e.AccountID, e.ID); err != nil {
		return fmt.Errorf("fan-out of %s: %w", e.ID, err)
	}
	return nil
}

func firstAttempt(d voiceops.Delivery) queue.Message {
	return queue.Message{AccountID: d.AccountID, EndpointID: d.EndpointID, EventID: d.EventID, DeliveryID: d.ID, Attempt: 1}
}

// ErrDeliveryInProgress is Retry's answer for a pending delivery: an attempt
// is already queued (409).
var ErrDeliveryInProgress = &voiceops.Error{Kind: voiceops.KindConflict, Message: "the delivery is still in progress: an attempt is already queued"}

// ErrEndpointDisabled is Retry's answer for a delivery of a disabled
// endpoint (409): it would only be skipped.
var ErrEndpointDisabled = &voiceops.Error{Kind: voiceops.KindConflict, Message: "the webhook endpoint is disabled"}

// MaxAttempts bounds the attempts of one delivery, scheduled and manual:
// each is kept in the delivery's record, which must stay under the item
// limit (100 attempts are about 30 KB).
const MaxAttempts = 100

// ErrAttemptLimit is Retry's answer for a delivery that has had MaxAttempts.
var ErrAttemptLimit = &voiceops.Error{Kind: voiceops.KindConflict, Message: fmt.Sprintf("the delivery has had the maximum of %d attempts", MaxAttempts)}

// Retry queues one more attempt, made at once, of a finished delivery: for
// POST /v1/webhook-endpoints/{id}/deliveries/{delivery_id}/retry (202).
//
// Any finished delivery can be retried: failed, skipped (the endpoint was
// disabled then and is enabled now) and delivered too, which re-sends the
// same event (same webhook-id, so receivers that deduplicate see it as
// such). The attempt is numbered after the last one, appears in the same
// log, and is a single attempt: if it fails, the delivery is failed again,
// with no scheduled retries after it.
//
// Errors: ErrNotFound (no such delivery of this endpoint, or the endpoint
// is gone), ErrEndpointDisabled, ErrDeliveryInProgress (pending), and
// ErrAttemptLimit (MaxAttempts made), and ErrConflictingWrite when the
// delivery changed meanwhile (409; the caller
// may simply retry). It returns the delivery as queued.
func (o *Outbox) Retry(ctx context.Context, accountID, endpointID, deliveryID string) (voiceops.Delivery, error) {
	// The endpoint and the delivery are read at once (both keys are of
	// the caller's account and endpoint); the delivery is dropped unread
	// unless the endpoint is there and enabled.
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	type read struct {
		d   voiceops.Delivery
		err error
	}
	delivered := make(chan read, 1)
	go func() {
		d, err := o.deliveries.GetDelivery(readCtx, accountID, endpointID, deliveryID)
		delivered <- read{d, err}
	}()
	ep, err := o.endpoints.GetEndpoint(readCtx, accountID, endpointID)
	if err != nil || !ep.Enabled {
		cancel()
		<-delivered // no read outlives the call
		if err != nil {
			return voiceops.Delivery{}, err
		}
		return voiceops.Delivery{}, ErrEndpointDisabled
	}
	dr := <-delivered
	d, err := dr.d, dr.err
	if err != nil {
		return voiceops.Delivery{}, err
	}
	if d.Status == voiceops.DeliveryPending {
		return voiceops.Delivery{}, ErrDeliveryInProgress
	}
	if len(d.Attempts) >= MaxAttempts {
		return voiceops.Delivery{}, ErrAttemptLimit
	}
	prev := d
	now := o.now()
	d.Status, d.NextAttemptAt, d.UpdatedAt = voiceops.DeliveryPending, &now, now
	n := len(d.Attempts)
	if err := o.deliveries.RecordAttempt(ctx, d, n); err != nil {
		return voiceops.Delivery{}, err
	}
	m := queue.Message{AccountID: accountID, EndpointID: endpointID, EventID: d.EventID, DeliveryID: d.ID, Attempt: n + 1, Manual: true}
	if err := o.queue.Send(ctx, m, 0); err != nil {
		// Nothing will make the attempt: put the delivery back as it was
		// (best effort; the caller sees the failure either way).
		_ = o.deliveries.RecordAttempt(context.WithoutCancel(ctx), prev, n)
		return voiceops.Delivery{}, voiceops.Internal(fmt.Errorf("retry of %s: %w", d.ID, err))
	}
	return d, nil
}

// Test event contents: a sample rule, so receivers see a realistic body.
const (
	testRuleID   = "ar_test"
	testRuleName = "Test alert"
)

// SendTest sends a sample alerts.triggered event, marked "test": true, to
// ep alone (the endpoint as the caller read it: it is not read again):
// for POST /v1/webhook-endpoints/{id}/test (202). It stores the event
// (pending) and its delivery in one write, queues the delivery's first
// attempt and marks the event fanned out, and returns the event and its
// delivery as queued. A failure after the write leaves the event pending,
// and the evaluator's repair pass finishes its fan-out (the delivery
// exists: only its first attempt is queued again). The delivery follows
// the normal retry schedule; to a disabled endpoint, or one deleted
// meanwhile, it ends "skipped".
func (o *Outbox) SendTest(ctx context.Context, ep voiceops.WebhookEndpoint) (voiceops.AlertEvent, voiceops.Delivery, error) {
	now := o.now()
	value := int64(1800)
	rule := voiceops.AlertRule{
		ID: testRuleID, AccountID: ep.AccountID, Name: testRuleName, Metric: voiceops.MetricTurnLatencyP95,
		Operator: voiceops.OpGreater, Threshold: 1500, Window: voiceops.Window5m, Enabled: true,
		State: voiceops.StateAlert, CurrentValue: &value,
	}
	e := voiceops.NewAlertEvent(voiceops.EventTriggered, rule, voiceops.StateOK, now, true)
	e.RuleID, e.EndpointID = "", ep.ID
	d := newDelivery(e, ep.ID, now)
	if err := o.events.PutEvent(ctx, e, d); err != nil {
		return voiceops.AlertEvent{}, voiceops.Delivery{}, err
	}
	if err := o.queueFirstAttempts(ctx, e, []voiceops.Delivery{d}); err != nil {
		return voiceops.AlertEvent{}, voiceops.Delivery{}, err
	}
	e.FannedOut = true
	return e, d, nil
}
