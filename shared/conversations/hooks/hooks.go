// Package hooks runs a project's functions: the HTTPS endpoints and Lambda
// functions a project names for its hooks (on start, on each turn, on end,
// on bridge ended, on external event). A function is given the conversation
// and may set state, override the agent's answer, end the conversation or
// hand it off. Run never changes a conversation itself: the caller applies
// the Result, or, on any error, counts a function error and goes on with the
// agent's own answer.
package hooks

import (
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Target is where one hook's function lives: exactly one of URL and
// LambdaARN.
type Target struct {
	// URL is an https:// endpoint, called with a signed POST.
	URL string
	// LambdaARN is a Lambda function ARN (a qualifier may be appended),
	// invoked synchronously.
	LambdaARN string
	// Timeout bounds the whole call; DefaultTimeout when not positive, at
	// most MaxTimeout.
	Timeout time.Duration
	// Secret ("whsec_" followed by base64) signs HTTPS calls with Standard
	// Webhooks headers. Required for URL targets; unused for Lambda.
	Secret string
}

// Call is one run of a hook.
type Call struct {
	// Hook is the hook's name, e.g. "on_turn"; sent as is.
	Hook         string
	Conversation voiceops.Conversation
	// Turn is the turn being answered; nil outside a turn (on start, on
	// end, bridge ended, external event).
	Turn *voiceops.Turn
	// Extra is the hook's own data, e.g. the bridge durations or the
	// external event; sent as "extra" ({} when nil).
	Extra map[string]any
}

// Result is what a function asked for. The zero Result asks for nothing.
type Result struct {
	// State holds the keys to set in the conversation's state (other keys
	// are kept); nil when the function set none.
	State map[string]any
	// Response, when not nil, replaces the agent's answer.
	Response *string
	// End ends the conversation after this answer.
	End bool
	// Handoff, when not nil, hands the conversation off.
	Handoff *Handoff
	// Metrics are the values to log in the conversation's `metrics`, in
	// the answer's order (an array's values in turn).
	Metrics []voiceops.CustomMetric
}

// Handoff is a function's request to transfer the conversation.
type Handoff struct {
	// Destination is the handoff destination; for a SIP handoff, the
	// outbound endpoint's name.
	Destination string
	Reason      string
	// SIP is set for the vendor interface's custom SIP handoff return value.
	SIP *SIP
}

// SIP is the custom SIP handoff of the vendor's interface: transfer the call through a
// configured outbound endpoint, showing a caller ID.
type SIP struct {
	// OutboundCallerID is the caller ID to present; may be empty.
	OutboundCallerID string
	// OutboundEndpoint names the project's configured outbound endpoint.
	OutboundEndpoint string
}

// Kind classifies a failed run. Every kind is a function error for the
// caller; Canceled means the caller's own context ended first.
type Kind string

const (
	// KindInvalidTarget: no URL and no ARN, both, a URL that is not https://,
	// a missing or malformed secret, or a Lambda target without a Lambda
	// client.
	KindInvalidTarget Kind = "invalid_target"
	// KindInvalidCall: no hook name, or data that cannot be encoded as JSON.
	KindInvalidCall Kind = "invalid_call"
	// KindRefused: the URL's host resolves to a non-public address.
	KindRefused Kind = "refused"
	// KindTimeout: no complete answer within the target's timeout.
	KindTimeout Kind = "timeout"
	// KindCanceled: the caller's context ended before the answer.
	KindCanceled Kind = "canceled"
	// KindUnreachable: DNS, connection or TLS failure.
	KindUnreachable Kind = "unreachable"
	// KindStatus: the endpoint answered with a status other than 2xx
	// (redirects are never followed).
	KindStatus Kind = "status"
	// KindInvoke: the Lambda service did not run the function (not found,
	// access denied, throttled...).
	KindInvoke Kind = "invoke"
	// KindFunctionError: the Lambda function ran and failed.
	KindFunctionError Kind = "function_error"
	// KindBadAnswer: the answer is not JSON of the expected shape, or is
	// larger than MaxAnswer.
	KindBadAnswer Kind = "bad_answer"
)

// Error is the error of a failed run. Its text is short and safe to log and
// count: it never holds the response body, the URL or a secret.
type Error struct {
	Hook string
	Kind Kind
	// StatusCode is the HTTP status (KindStatus) or the Lambda status code;
	// 0 when none.
	StatusCode int
	// Detail says what went wrong, e.g. "timed out after 2s".
	Detail string
	// cause is a sentinel only (context.DeadlineExceeded,
	// context.Canceled, webhook.ErrRefusedAddress), never a transport error
	// whose text could quote the URL.
	cause error
}

func (e *Error) Error() string {
	return fmt.Sprintf("hooks: %s: %s: %s", e.Hook, e.Kind, e.Detail)
}

// Unwrap lets errors.Is match context.DeadlineExceeded, context.Canceled and
// webhook.ErrRefusedAddress.
func (e *Error) Unwrap() error { return e.cause }
