// Package dialer places queued outbound calls through a telephony provider,
// paced per account. It consumes dial jobs (voiceops.DialJob) from a queue:
// SQS in deployed stacks (functions/dialer), in process on the dev server.
//
// A job's life: the dialer reads the call (a job whose call is not queued
// was handled before: dropped, so a call is never dialed twice), reserves
// the account's next slot (voiceops.Pacer, shared by every dialer), waits
// for it (in process when it is near, else by sending the job back to the
// queue with a delay, carrying the slot), claims the call with the
// conditional queued→calling write, places it, and queues a timeout check
// due voiceops.CallTimeout later: a call that no provider report has ended
// by then is failed with reason timeout.
package dialer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Dialer places calls. Now and Sleep are injected: tests run on a fake clock.
type Dialer struct {
	// Calls is the calls service: the dialer's claim and failures are its
	// transitions.
	Calls    *calls.Service
	Pacer    voiceops.Pacer
	Queue    voiceops.DialQueue
	Provider telephony.Provider
	Now      func() time.Time
	// Sleep waits d or until ctx ends (SleepContext in production).
	Sleep func(ctx context.Context, d time.Duration) error
	Log   *slog.Logger
	// MaxWait is the longest wait for a slot spent in process; a later
	// slot sends the job back to the queue (default DefaultMaxWait).
	MaxWait time.Duration
	// Timeout bounds a placed call (default voiceops.CallTimeout).
	Timeout time.Duration
	// MaxReceives is the queue's receives of a job before its DLQ (the
	// redrive policy's maxReceiveCount; default DefaultMaxReceives): on the
	// last one a failing job gives its call up (GiveUp).
	MaxReceives int
	// Telemetry receives the Dials metric (outcome, reason); none when nil.
	Telemetry telemetry.Recorder
}

// The Outcome dimension of the Dials metric.
const (
	DialPlaced = "placed"
	DialFailed = "failed"
)

// DefaultMaxReceives matches the outbound queue's redrive policy (infra).
const DefaultMaxReceives = 5

func (d *Dialer) maxReceives() int {
	if d.MaxReceives > 0 {
		return d.MaxReceives
	}
	return DefaultMaxReceives
}

// GiveUp ends the job's call as failure when the job cannot be handled: a
// queued call goes through calling (the only way to a terminal status)
// with reason failed; a placed call's check fails it with reason timeout.
// A call that has ended keeps its status.
func (d *Dialer) GiveUp(ctx context.Context, j voiceops.DialJob) error {
	if j.Check {
		return d.counted(voiceops.ReasonTimeout)(d.Calls.TimeOut(ctx, j.SID))
	}
	return d.counted(voiceops.ReasonFailed)(d.Calls.Abandon(ctx, j.SID, voiceops.ReasonFailed))
}

// DefaultMaxWait keeps the in-process waits short: a Lambda function pays
// for them, and SQS delays are whole seconds, so the last part of every
// wait is spent in process for sub-second accuracy.
const DefaultMaxWait = 3 * time.Second

// MaxQueueDelay is the longest delay SQS gives one message.
const MaxQueueDelay = queue.MaxSQSDelay

// orphanAge is how long a job whose call is missing is retried: the
// trigger sends the job and writes the call at once (calls.Trigger), and
// acknowledges the call within its request deadline (the outbound
// function's, httpapi.DefaultDeadline), which orphanAge is no shorter
// than. An older job without a call belongs to a trigger whose write
// failed (answered 500).
const orphanAge = 10 * time.Second

// placeAttempts bounds the tries of a provider that fails for a reason
// other than refusing the call (network, 5xx).
const placeAttempts = 3

// SleepContext waits d or until ctx ends.
func SleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *Dialer) maxWait() time.Duration {
	if d.MaxWait > 0 {
		return d.MaxWait
	}
	return DefaultMaxWait
}

func (d *Dialer) timeout() time.Duration {
	if d.Timeout > 0 {
		return d.Timeout
	}
	return voiceops.CallTimeout
}

// Handle handles one job. An error leaves the job to the queue's retry.
func (d *Dialer) Handle(ctx context.Context, j voiceops.DialJob) error {
	if j.Check {
		return d.check(ctx, j)
	}
	c, err := d.queuedCall(ctx, j)
	if err != nil || c == nil {
		return err
	}
	if j.Slot.IsZero() {
		if j.Slot, err = d.Pacer.ReserveSlot(ctx, j.AccountID, d.Now()); err != nil {
			return err
		}
	}
	if wait := j.Slot.Sub(d.Now()); wait > d.maxWait() {
		// Back to the queue until about maxWait before the slot.
		return d.Queue.SendDial(ctx, j, min(wait-d.maxWait()+time.Second, MaxQueueDelay).Truncate(time.Second))
	}
	if err := d.Sleep(ctx, j.Slot.Sub(d.Now())); err != nil {
		return err
	}
	return d.place(ctx, *c)
}

// queuedCall returns the job's call if it is still queued, nil if the job
// is to be dropped.
func (d *Dialer) queuedCall(ctx context.Context, j voiceops.DialJob) (*voiceops.Call, error) {
	for {
		c, err := d.Calls.Get(ctx, j.SID)
		if errors.Is(err, voiceops.ErrNotFound) {
			if d.Now().Sub(j.QueuedAt) < orphanAge {
				if err := d.Sleep(ctx, 200*time.Millisecond); err != nil {
					return nil, err
				}
				continue
			}
			d.Log.Warn("dial job without a call: dropped (its trigger failed)", "call_sid", j.SID)
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if c.AccountID != j.AccountID {
			return nil, fmt.Errorf("dial job of call %s names account %s, the call is of %s", j.SID, j.AccountID, c.AccountID)
		}
		if c.Status != voiceops.CallQueued {
			return nil, nil // dialed before: a repeated delivery
		}
		return &c, nil
	}
}

// place claims the call (queued→calling: only one dialer wins it), asks
// the provider to place it, and queues its timeout check.
func (d *Dialer) place(ctx context.Context, c voiceops.Call) error {
	claimed, err := d.Calls.Claim(ctx, c.SID)
	if err != nil {
		return err
	}
	if !claimed {
		d.Log.Info("the call was claimed by another dialer", "call_sid", c.SID)
		return nil
	}
	deadline := d.Now().UTC().Add(d.timeout())
	// The check first: from here on the call cannot hang, whatever happens.
	check := voiceops.DialJob{SID: c.SID, AccountID: c.AccountID, QueuedAt: c.CreatedAt, Check: true, Deadline: deadline}
	if err := d.Queue.SendDial(ctx, check, min(d.timeout(), MaxQueueDelay)); err != nil {
		d.Log.Error("queueing the timeout check failed; failing the call", "call_sid", c.SID, "error", err)
		return d.fail(ctx, c.SID, voiceops.ReasonFailed)
	}
	req := telephony.CallRequest{SID: c.SID, AccountID: c.AccountID, ProjectID: c.ProjectID, To: c.ToNumber, Metadata: c.Metadata}
	for attempt := range placeAttempts {
		if err = d.Provider.Place(ctx, req); err == nil || errors.Is(err, telephony.ErrRejected) {
			break
		}
		if serr := d.Sleep(ctx, time.Duration(attempt+1)*500*time.Millisecond); serr != nil {
			break
		}
	}
	if err != nil {
		d.Log.Warn("the provider did not take the call", "call_sid", c.SID, "error", err)
		return d.fail(ctx, c.SID, voiceops.ReasonFailed)
	}
	telemetry.Or(d.Telemetry).Record(telemetry.Dials, 1, DialPlaced, "none")
	return nil
}

// fail ends a calling call as failure (calls.Service.Fail) and counts it;
// a call that ended meanwhile keeps its status and is not counted.
func (d *Dialer) fail(ctx context.Context, sid, reason string) error {
	return d.counted(reason)(d.Calls.Fail(ctx, sid, reason))
}

// counted counts a failure with reason when the call moved to it.
func (d *Dialer) counted(reason string) func(moved bool, err error) error {
	return func(moved bool, err error) error {
		if moved {
			telemetry.Or(d.Telemetry).Record(telemetry.Dials, 1, DialFailed, reason)
		}
		return err
	}
}

// check handles a timeout check: early, it goes back to the queue for the
// rest of the wait; due, it fails a call that has not ended.
func (d *Dialer) check(ctx context.Context, j voiceops.DialJob) error {
	if rest := j.Deadline.Sub(d.Now()); rest > time.Second {
		return d.Queue.SendDial(ctx, j, min(rest, MaxQueueDelay).Truncate(time.Second))
	}
	moved, err := d.Calls.TimeOut(ctx, j.SID)
	if moved {
		d.Log.Warn("no provider report ended the call in time", "call_sid", j.SID, "timeout", d.timeout())
	}
	return d.counted(voiceops.ReasonTimeout)(moved, err)
}
