package voiceops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"
)

// CallStatus is the status of an outbound call (the vendor's interface, "States and
// transitions").
type CallStatus string

const (
	CallQueued  CallStatus = "queued"
	CallCalling CallStatus = "calling"
	CallSuccess CallStatus = "success"
	CallFailure CallStatus = "failure"
)

// CallStatuses lists every outbound call status.
var CallStatuses = []CallStatus{CallQueued, CallCalling, CallSuccess, CallFailure}

// Terminal reports whether the status is final (success, failure).
func (s CallStatus) Terminal() bool { return s == CallSuccess || s == CallFailure }

// CallPredecessor returns the only status a call may move to `to` from:
// queued→calling, calling→success|failure. ok is false for a status no
// transition leads to (queued, or not a status).
func CallPredecessor(to CallStatus) (from CallStatus, ok bool) {
	switch to {
	case CallCalling:
		return CallQueued, true
	case CallSuccess, CallFailure:
		return CallCalling, true
	}
	return "", false
}

// CallMoveTargets lists the statuses a move can lead to (those
// CallPredecessor knows), in CallStatuses' order.
func CallMoveTargets() []CallStatus {
	var out []CallStatus
	for _, st := range CallStatuses {
		if _, ok := CallPredecessor(st); ok {
			out = append(out, st)
		}
	}
	return out
}

// CheckCallMove checks a move that another telephony system asks for: the
// status it sent (sent false: none, which the caller's reader reports) and
// the failure's reason (hasReason false: none). It returns the status, the
// reason the move records (ReasonFailed for a failure sent without one),
// and what is wrong with either field.
func CheckCallMove(status string, sent bool, reason string, hasReason bool) (CallStatus, string, []FieldError) {
	var errs []FieldError
	to := CallStatus(status)
	if sent && !slices.Contains(CallMoveTargets(), to) {
		errs = append(errs, FieldError{Field: "status", Message: "must be one of: " + joinStatuses(CallMoveTargets())})
		to = ""
	}
	if !sent {
		to = ""
	}
	switch {
	case hasReason && to != CallFailure:
		errs = append(errs, FieldError{Field: "reason", Message: "is only for status failure"})
	case hasReason && !slices.Contains(CallReasons, reason):
		errs = append(errs, FieldError{Field: "reason", Message: "must be one of: " + strings.Join(CallReasons, ", ")})
	case !hasReason && to == CallFailure:
		reason = ReasonFailed
	}
	return to, reason, errs
}

func joinStatuses(ss []CallStatus) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// CallRetention is how long a call's status stays readable after a
// terminal status (docs/outbound-calls.md: then 404, even before the TTL deletes it).
const CallRetention = 2 * time.Hour

// PrefixCallSID starts every call SID: "CA" + 32 lowercase hex digits.
const PrefixCallSID = "CA"

// NewCallSID returns a new random call SID (128 random bits).
func NewCallSID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return PrefixCallSID + hex.EncodeToString(b[:])
}

// ValidCallSID reports whether s has the shape of a call SID.
func ValidCallSID(s string) bool {
	hex, ok := strings.CutPrefix(s, PrefixCallSID)
	return ok && len(hex) == 32 && every(hex, func(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' })
}

// Call is an outbound call of a project.
type Call struct {
	SID       string
	AccountID string
	ProjectID string
	ToNumber  string
	// Metadata is the trigger's free key-value context (nil when absent):
	// string values only (the trigger refuses others), so that it can
	// become the call's conversation's integration_attributes as is.
	Metadata map[string]any
	// Encryption and CountryCode are the trigger's optional fields of the
	// vendor's published interface, kept as sent ("" when absent).
	Encryption  string
	CountryCode string
	Status      CallStatus
	// Reason says why a call ended in failure (CallReasons); "" otherwise.
	Reason string
	// ConversationID is the voice conversation of the answered call ("" until answered).
	ConversationID string
	// Steps counts the provider callbacks of the answered call that were
	// claimed (ClaimCallStep): step 1 is the answer, step 1+k the k-th
	// turn. StepAt is when the last one was claimed, StepToken its
	// request's idempotency token ("" when the provider sent none).
	Steps     int
	StepAt    *time.Time
	StepToken string
	// StepInput is what the last claimed step's work runs on, kept from
	// its claim until its reply, so that the work can run apart from the
	// callback that claimed it (an asynchronous invocation names the step
	// and reads the rest here). StepStarted is when such a run started it
	// (StartCallStep); nil when none has.
	StepInput   CallStepInput
	StepStarted *time.Time
	// Greeting is the answer's reply (step 1), kept for a replayed answer;
	// Reply is the reply of the last step answered (nil before the first).
	// A step whose reply is not stored is in flight.
	Greeting  *CallReply
	Reply     *CallReply
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is set with a terminal status: UpdatedAt + CallRetention.
	// From then on the call reads as not found.
	ExpiresAt *time.Time
}

// CallReply is what the call's conversation answered one step: the
// agent's words and whether the conversation ended with them. The
// provider's answer (Twilio's TwiML) is rendered from it alone, so a
// replayed callback gets the same answer.
type CallReply struct {
	Step int
	Text string
	End  bool
}

// CallStepInput is what the provider's callback brought for its step's
// work: the caller ID of the answer, the callee's words of a turn.
type CallStepInput struct {
	From    string
	Message string
	DTMF    string
}

// InFlight reports whether the call's last claimed step has no reply yet.
func (c Call) InFlight() bool { return c.Steps > 0 && (c.Reply == nil || c.Reply.Step < c.Steps) }

// Failure reasons of an outbound call: the provider's outcomes, and
// timeout when no provider report ended the call within CallTimeout.
const (
	ReasonBusy     = "busy"
	ReasonNoAnswer = "no-answer"
	ReasonFailed   = "failed"
	ReasonCanceled = "canceled"
	ReasonTimeout  = "timeout"
)

// CallReasons lists every failure reason.
var CallReasons = []string{ReasonBusy, ReasonNoAnswer, ReasonFailed, ReasonCanceled, ReasonTimeout}

// CallTimeout bounds a placed call: one that no provider report has ended
// CallTimeout after it went calling is failed with ReasonTimeout. It is the
// ring time (60 s) plus the longest call the dialer asks the provider for
// (CallTimeLimit), plus 5 minutes for late reports.
const CallTimeout = CallRingTimeout + CallTimeLimit + 5*time.Minute

// CallRingTimeout is how long the provider lets a call ring; CallTimeLimit
// is the longest an answered call may last (the provider hangs up then).
const (
	CallRingTimeout = 60 * time.Second
	CallTimeLimit   = time.Hour
)

// MetadataMaxBytes bounds a trigger's metadata, encoded as compact JSON.
const MetadataMaxBytes = 26 * 1024

// Expired reports whether the call is past its retention at now: more
// than CallRetention after its terminal status.
func (c Call) Expired(now time.Time) bool { return c.ExpiresAt != nil && now.After(*c.ExpiresAt) }

// ErrCallTransition is the error of a status change that the base host's
// transitions do not allow (terminal statuses never change).
var ErrCallTransition = &Error{Kind: KindConflict, Message: "the call's status cannot change to this status"}

// CallStore holds outbound calls. A call is found by its SID alone (SIDs
// are random and unique); reads ignore expired calls (ErrNotFound).
type CallStore interface {
	// CreateCall stores a new queued call; ErrAlreadyExists if the SID is taken.
	CreateCall(ctx context.Context, c Call) error
	// GetCall returns the call if it is not expired at now.
	GetCall(ctx context.Context, sid string, now time.Time) (Call, error)
	// MoveCall changes the call's status to `to` at `at`, in one
	// conditional write, if the call's current status is the one
	// CallPredecessor(to) names (else ErrCallTransition); a terminal status
	// sets ExpiresAt = at + CallRetention. reason is kept with a failure
	// (ignored otherwise). ErrNotFound when the call is missing or expired
	// at `at`.
	MoveCall(ctx context.Context, sid string, to CallStatus, reason string, at time.Time) (Call, error)
	// ClaimCallStep claims callback step n of the call (1 the answer, 1+k
	// the k-th turn) at `at`, with the request's idempotency token, in one
	// conditional write. It succeeds while the call is not terminal and
	// either step n-1 is answered (its reply stored; for n = 1: no step
	// claimed yet) or step n was claimed before `stale` and has no reply
	// (an attempt that died: taken over). Else ErrCallTransition;
	// ErrNotFound when the call is missing or expired at `at`. It returns
	// the call as it is afterwards. in is kept as the step's StepInput
	// (until its reply), and the claim clears StepStarted.
	ClaimCallStep(ctx context.Context, sid string, n int, token string, in CallStepInput, at, stale time.Time) (Call, error)
	// StartCallStep marks the claim of step n made at claimedAt as started
	// at `at`, in one conditional write: it succeeds once per claim, while
	// that claim is the call's last, has no reply and is not started (else
	// ErrCallTransition), so that a run delivered twice works once.
	// ErrNotFound when the call is missing or expired at `at`.
	StartCallStep(ctx context.Context, sid string, n int, claimedAt, at time.Time) (Call, error)
	// ReplyCallStep stores the reply of the claimed step reply.Step, if it
	// is the call's last claimed step and has no reply yet (else
	// ErrCallTransition). The answer's (step 1) also records the call's
	// conversation, conversationID, and is kept as the Greeting. The
	// step's StepInput is cleared.
	ReplyCallStep(ctx context.Context, sid, conversationID string, reply CallReply, at time.Time) (Call, error)
}

// DialJob asks the dialer to place a call. It names the call; the dialer
// reads the rest from the call store.
type DialJob struct {
	SID       string `json:"sid"`
	AccountID string `json:"account_id"`
	// QueuedAt is when the trigger queued the job.
	QueuedAt time.Time `json:"queued_at"`
	// Slot, when set, is the pacing slot the dialer already reserved for
	// this call: the job came back from a delay and dials at Slot.
	Slot time.Time `json:"slot,omitzero"`
	// Check marks the dialer's own timeout check of a placed call, due at
	// Deadline: a call not ended by then is failed with ReasonTimeout.
	Check    bool      `json:"check,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
}

// DialQueue carries dial jobs to the dialer (SQS, or in process).
type DialQueue interface {
	// SendDial queues j to be received after delay (0: at once).
	SendDial(ctx context.Context, j DialJob, delay time.Duration) error
}

// Pacer hands out an account's dialing slots: the account's outbound
// rate, shared by every dialer instance.
type Pacer interface {
	// ReserveSlot returns when the account's next call may start, at or
	// after now, and reserves it: the next reservation gets a later slot.
	ReserveSlot(ctx context.Context, accountID string, now time.Time) (time.Time, error)
}

// DefaultOutboundRate is an account's outbound rate unless the operator
// set another: new calls per second (Twilio's default pacing).
const DefaultOutboundRate = 1.0

// MaxOutboundRate bounds the rate an operator may set.
const MaxOutboundRate = 100.0

// SlotInterval returns the time between two slots at rate calls per second
// (rate <= 0: the default).
func SlotInterval(rate float64) time.Duration {
	if rate <= 0 {
		rate = DefaultOutboundRate
	}
	return time.Duration(float64(time.Second) / rate)
}
