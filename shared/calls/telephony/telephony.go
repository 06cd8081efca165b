// Package telephony is what the dialer needs of a telephony provider: a
// Provider places a call, and the provider's status reports, mapped onto
// ours (Outcome), move the call through its statuses (shared/calls). Adapters live in sub-packages: twilio (the
// real one) and simulator (the dev server's default).
package telephony

import (
	"context"
	"errors"

	"github.com/voiceops/opsapi/shared/voiceops"
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

// Outcome maps a provider status onto ours: the status it moves the call
// to and, for a failure, the reason. ok is false for a status we do not
// know (ignored).
func Outcome(s Status) (to voiceops.CallStatus, reason string, ok bool) {
	switch s {
	case StatusQueued, StatusInitiated, StatusRinging, StatusInProgress:
		return voiceops.CallCalling, "", true
	case StatusCompleted:
		return voiceops.CallSuccess, "", true
	case StatusBusy:
		return voiceops.CallFailure, voiceops.ReasonBusy, true
	case StatusNoAnswer:
		return voiceops.CallFailure, voiceops.ReasonNoAnswer, true
	case StatusFailed:
		return voiceops.CallFailure, voiceops.ReasonFailed, true
	case StatusCanceled:
		return voiceops.CallFailure, voiceops.ReasonCanceled, true
	}
	return "", "", false
}
