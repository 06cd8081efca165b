// Package telephony is what the dialer needs of a telephony provider: a
// Provider places a call, and the provider's status reports, mapped onto
// ours by the calls service (calls.Outcome), move the call through its
// statuses. The real adapter is in twilio; the dev server's default is
// shared/calls/simulator.
package telephony

import (
	"context"
	"errors"
)

// CallRequest is a call to place.
type CallRequest struct {
	SID       string // our call SID, which the provider's reports carry back
	AccountID string
	ProjectID string
	To        string
	Metadata  map[string]any
}

// Provider places outbound calls. Place returns once the provider has taken
// the call; its outcome arrives later as status reports (Apply).
type Provider interface {
	Place(ctx context.Context, req CallRequest) error
}

// ErrRejected wraps a provider's refusal of a call (a bad number, the
// account's credentials): placing it again would fail the same way, so
// the call ends as failure "failed" at once.
var ErrRejected = errors.New("the provider refused the call")

// Status is a provider's call status, with Twilio's names (the vocabulary
// every adapter maps onto).
type Status string

const (
	StatusQueued     Status = "queued"
	StatusInitiated  Status = "initiated"
	StatusRinging    Status = "ringing"
	StatusInProgress Status = "in-progress"
	StatusCompleted  Status = "completed"
	StatusBusy       Status = "busy"
	StatusNoAnswer   Status = "no-answer"
	StatusFailed     Status = "failed"
	StatusCanceled   Status = "canceled"
)
