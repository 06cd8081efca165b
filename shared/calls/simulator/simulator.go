// Package simulator is a telephony provider that places no real call: the
// dev server's default. The last four digits of the called number decide
// the outcome, like a payment provider's test card numbers:
//
//	...0001  busy       failure, reason busy
//	...0002  no-answer  failure, reason no-answer
//	...0003  failed     failure, reason failed
//	other    answers after Ring, talks a few turns with the project's agent
//	         (the call's voice conversation), hangs up: success
//
// Its reports, answer and turns go to the calls service (shared/calls) the
// same way Twilio's callbacks do (shared/calls/twilioapi): from the provider's
// report on, a simulated call and a real one take the same path, and the
// call records its conversation the same way.
package simulator

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/telephony"
)

// DefaultCallerID is the simulator's from_number (Twilio's test "from"
// number, which no real line has).
const DefaultCallerID = "+15005550006"

// DefaultRing is how long a simulated call rings.
const DefaultRing = 1500 * time.Millisecond

// Script is what the simulated callee says, one turn each, until the
// agent ends the conversation or the script runs out.
// The lines suit the dev server's demo agent (agent.DemoConfig).
var Script = []string{"Hello, who is this?", "balance", "bye"}

// Simulator is the simulated provider.
type Simulator struct {
	// Calls is the calls service, with the conversation engine.
	Calls    *calls.Service
	CallerID string // default DefaultCallerID
	Ring     time.Duration
	Sleep    func(ctx context.Context, d time.Duration) error
	Log      *slog.Logger

	wg sync.WaitGroup
}

var _ telephony.Provider = (*Simulator)(nil)

// Outcomes of the test numbers, by the called number's last four digits.
var Outcomes = map[string]telephony.Status{
	"0001": telephony.StatusBusy,
	"0002": telephony.StatusNoAnswer,
	"0003": telephony.StatusFailed,
}

// Place takes the call and plays it out in the background.
func (s *Simulator) Place(_ context.Context, req telephony.CallRequest) error {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Not the dialer's context: the call outlives the placing.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := s.play(ctx, req); err != nil {
			s.Log.Error("simulated call", "call_sid", req.SID, "error", err)
		}
	}()
	return nil
}

// Wait waits for the calls in progress to end (tests, shutdown).
func (s *Simulator) Wait() { s.wg.Wait() }

func (s *Simulator) report(ctx context.Context, sid string, st telephony.Status) error {
	_, err := s.Calls.Report(ctx, sid, st)
	return err
}

func (s *Simulator) play(ctx context.Context, req telephony.CallRequest) error {
	if err := s.report(ctx, req.SID, telephony.StatusRinging); err != nil {
		return err
	}
	ring := s.Ring
	if ring == 0 {
		ring = DefaultRing
	}
	if err := s.Sleep(ctx, ring); err != nil {
		return err
	}
	if st, ok := Outcomes[req.To[max(len(req.To)-4, 0):]]; ok {
		return s.report(ctx, req.SID, st)
	}
	if err := s.report(ctx, req.SID, telephony.StatusInProgress); err != nil {
		return err
	}
	if err := s.talk(ctx, req.SID); err != nil {
		// Answered, but the conversation could not run (no agent, a
		// store down): the call failed.
		s.Log.Error("simulated call: the conversation failed", "call_sid", req.SID, "error", err)
		return s.report(ctx, req.SID, telephony.StatusFailed)
	}
	// The hang-up: the service ends the conversation, as on Twilio's report.
	return s.report(ctx, req.SID, telephony.StatusCompleted)
}

// talk runs the answered call: the answer (the agent greets), then the
// callee's script, one turn each, until the agent or the script ends.
func (s *Simulator) talk(ctx context.Context, sid string) error {
	from := s.CallerID
	if from == "" {
		from = DefaultCallerID
	}
	c, err := s.Calls.Get(ctx, sid)
	if err != nil {
		return err
	}
	rep, err := s.Calls.Answer(ctx, c, from, "")
	if err != nil {
		return err
	}
	for _, line := range Script {
		if rep.End {
			return nil // the agent hung up
		}
		if err := s.Sleep(ctx, 300*time.Millisecond); err != nil {
			return err
		}
		if c, err = s.Calls.Get(ctx, sid); err != nil {
			return err
		}
		if rep, err = s.Calls.Turn(ctx, c, rep.ConversationID, rep.Turn, "", calls.Speech{Message: strings.TrimSpace(line)}); err != nil {
			return err
		}
	}
	return nil
}
