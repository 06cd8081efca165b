package calls

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// New returns the calls service on store and the clock now: what every
// program that moves calls needs. What only some run is an Option: the
// trigger's dial queue, the answered calls' engine, the outcome counts,
// the in-flight steps' timing. Every program builds the service here, so a
// new part of it has one place to get its default.
func New(store voiceops.CallStore, now func() time.Time, opts ...Option) *Service {
	s := &Service{Calls: store, Now: now, StepWait: DefaultStepWait, StepLease: DefaultStepLease, StepRun: DefaultStepRun}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Option adds a part to the service New builds.
type Option func(*Service)

// WithDial carries each triggered call to the dialer (the trigger).
func WithDial(q voiceops.DialQueue) Option { return func(s *Service) { s.Dial = q } }

// WithEngine runs answered calls' conversations (the provider's callbacks
// and the simulator; the dialer runs none).
func WithEngine(e Engine) Option { return func(s *Service) { s.Engine = e } }

// WithTelemetry counts the provider's outcomes (telemetry.Dials).
func WithTelemetry(r telemetry.Recorder) Option { return func(s *Service) { s.Telemetry = r } }

// WithSleep waits for a step in flight with sleep instead of a timer (a
// test's clock, or dialer.SleepContext).
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(s *Service) { s.Sleep = sleep }
}

// WithStepLease sets how long a claimed step without a reply is another
// request's (default DefaultStepLease): a function whose steps end with
// their callback leases them for that callback's time only.
func WithStepLease(d time.Duration) Option { return func(s *Service) { s.StepLease = d } }

// WithDetach runs a claimed step's work apart from its callback (a
// long-lived server: go work()), bounded by DefaultStepRun (Service.Detach).
func WithDetach(detach func(work func())) Option { return func(s *Service) { s.Detach = detach } }

// WithHandoff carries each claimed step to a run of its own (deployed: an
// asynchronous invocation of the calls function), so that its work outlives
// the callback that claimed it.
func WithHandoff(handoff func(ctx context.Context, j StepJob) error) Option {
	return func(s *Service) { s.Handoff = handoff }
}

// Outcome maps a provider status onto the call's statuses: the status it
// moves the call to and, for a failure, the reason. ok is false for a
// status the service does not know (its report is ignored).
func Outcome(s telephony.Status) (to voiceops.CallStatus, reason string, ok bool) {
	switch s {
	case telephony.StatusQueued, telephony.StatusInitiated, telephony.StatusRinging, telephony.StatusInProgress:
		return voiceops.CallCalling, "", true
	case telephony.StatusCompleted:
		return voiceops.CallSuccess, "", true
	case telephony.StatusBusy:
		return voiceops.CallFailure, voiceops.ReasonBusy, true
	case telephony.StatusNoAnswer:
		return voiceops.CallFailure, voiceops.ReasonNoAnswer, true
	case telephony.StatusFailed:
		return voiceops.CallFailure, voiceops.ReasonFailed, true
	case telephony.StatusCanceled:
		return voiceops.CallFailure, voiceops.ReasonCanceled, true
	}
	return "", "", false
}

// TimeOut ends a call that no provider report ended within
// voiceops.CallTimeout of its placing: a call still calling fails with
// reason timeout; one that has ended (or is gone) keeps its status. It
// tells whether the call moved.
func (s *Service) TimeOut(ctx context.Context, sid string) (moved bool, err error) {
	return s.Fail(ctx, sid, voiceops.ReasonTimeout)
}
