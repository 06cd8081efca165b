package voiceops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// CallStatus is the status of an outbound call (doc 2, "States and
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

// CallRetention is how long a call's status stays readable after a
// terminal status (DECISIONS.md: then 404, even before the TTL deletes it).
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
	// Metadata is the trigger's free key-value context (nil when absent).
	Metadata  map[string]any
	Status    CallStatus
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is set with a terminal status: UpdatedAt + CallRetention.
	// From then on the call reads as not found.
	ExpiresAt *time.Time
}

// Expired reports whether the call is past its retention at now: more
// than CallRetention after its terminal status.
func (c Call) Expired(now time.Time) bool { return c.ExpiresAt != nil && now.After(*c.ExpiresAt) }

// ErrCallTransition is the error of a status change that doc 2's
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
	// sets ExpiresAt = at + CallRetention. ErrNotFound when the call is
	// missing or expired at `at`.
	MoveCall(ctx context.Context, sid string, to CallStatus, at time.Time) (Call, error)
}
