// Package simulator is a telephony provider that places no real call: the
// dev server's default. The last four digits of the called number decide
// the outcome, like a payment provider's test card numbers:
//
//	...0001  busy       failure, reason busy
//	...0002  no-answer  failure, reason no-answer
//	...0003  failed     failure, reason failed
//	other    answers after Ring, talks a few turns with the project's agent
//	         through the conversation engine (the voice intake's), hangs up:
//	         success
//
// Reports go through telephony.Apply, like a real provider's callbacks.
package simulator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/conversation"
	"github.com/voiceops/opsapi/shared/telephony"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Engine is the conversation engine's voice entry points (the voice
// intake's: shared/conversation.Engine).
type Engine interface {
	Start(ctx context.Context, in conversation.StartInput) (conversation.Answer, error)
	Respond(ctx context.Context, accountID, projectID, conversationID string, in conversation.TurnInput) (conversation.Answer, error)
	Close(ctx context.Context, accountID, projectID, conversationID string, reason voiceops.EndReason) (voiceops.Conversation, error)
}

var _ Engine = (*conversation.Engine)(nil)

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
	Calls    voiceops.CallStore
	Engine   Engine
	CallerID string // default DefaultCallerID
	Ring     time.Duration
	Now      func() time.Time
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
	_, err := telephony.Apply(ctx, s.Calls, sid, st, s.Now().UTC())
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
	if err := s.talk(ctx, req); err != nil {
		// Answered, but the conversation could not run (no agent, a
		// store down): the call failed.
		s.Log.Error("simulated call: the conversation failed", "call_sid", req.SID, "error", err)
		return s.report(ctx, req.SID, telephony.StatusFailed)
	}
	return s.report(ctx, req.SID, telephony.StatusCompleted)
}

// talk runs the answered call's conversation: the agent greets, the callee
// says its script, the callee hangs up.
func (s *Simulator) talk(ctx context.Context, req telephony.CallRequest) error {
	from := s.CallerID
	if from == "" {
		from = DefaultCallerID
	}
	ans, err := s.Engine.Start(ctx, conversation.StartInput{
		AccountID: req.AccountID, ProjectID: req.ProjectID, Channel: voiceops.ChannelVoice,
		FromNumber: from, ToNumber: req.To, IntegrationAttributes: req.Metadata,
	})
	if err != nil {
		return err
	}
	id := ans.Conversation.ID
	for _, line := range Script {
		if ans.End {
			return nil // the agent hung up (the engine ended the conversation)
		}
		if err := s.Sleep(ctx, 300*time.Millisecond); err != nil {
			return err
		}
		if ans, err = s.Engine.Respond(ctx, req.AccountID, req.ProjectID, id, conversation.TurnInput{Message: strings.TrimSpace(line)}); err != nil {
			return err
		}
	}
	if ans.End {
		return nil
	}
	if _, err := s.Engine.Close(ctx, req.AccountID, req.ProjectID, id, voiceops.EndCompleted); err != nil && !errors.Is(err, conversation.ErrEnded) {
		return err
	}
	return nil
}
