package memory

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Calls is the in-memory store of outbound calls.
type Calls struct {
	mu    sync.Mutex
	calls map[string]voiceops.Call // by SID
}

// NewCalls returns an empty call store.
func NewCalls() *Calls { return &Calls{calls: map[string]voiceops.Call{}} }

var _ voiceops.CallStore = (*Calls)(nil)

// cloneCall copies the call's metadata and expiry, so callers never share them.
func cloneCall(c voiceops.Call) voiceops.Call {
	if c.Metadata != nil {
		b, _ := json.Marshal(c.Metadata)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		c.Metadata = m
	}
	c.ExpiresAt, c.StepAt, c.StepStarted = clonePtr(c.ExpiresAt), clonePtr(c.StepAt), clonePtr(c.StepStarted)
	c.Greeting, c.Reply = clonePtr(c.Greeting), clonePtr(c.Reply)
	return c
}

func (s *Calls) CreateCall(_ context.Context, c voiceops.Call) error {
	if err := checkItem(c, 0); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.calls[c.SID]; ok {
		return voiceops.ErrAlreadyExists
	}
	s.calls[c.SID] = cloneCall(c)
	return nil
}

func (s *Calls) GetCall(_ context.Context, sid string, now time.Time) (voiceops.Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[sid]
	if !ok || c.Expired(now) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	return cloneCall(c), nil
}

func (s *Calls) MoveCall(_ context.Context, sid string, to voiceops.CallStatus, reason string, at time.Time) (voiceops.Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[sid]
	if !ok || c.Expired(at) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	from, ok := voiceops.CallPredecessor(to)
	if !ok || c.Status != from {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	c.Status, c.UpdatedAt = to, at
	if to == voiceops.CallFailure {
		c.Reason = reason
	}
	if to.Terminal() {
		exp := at.Add(voiceops.CallRetention)
		c.ExpiresAt = &exp
	}
	s.calls[sid] = c
	return cloneCall(c), nil
}

func (s *Calls) ClaimCallStep(_ context.Context, sid string, n int, token string, in voiceops.CallStepInput, at, stale time.Time) (voiceops.Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[sid]
	if !ok || c.Expired(at) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	answered := func(step int) bool { return step == 0 || c.Reply != nil && c.Reply.Step == step }
	next := c.Steps == n-1 && answered(n-1)
	takeover := c.Steps == n && c.InFlight() && c.StepAt != nil && c.StepAt.Before(stale)
	if c.Status.Terminal() || n < 1 || !next && !takeover {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	c.Steps, c.StepAt, c.StepToken, c.StepInput, c.StepStarted = n, &at, token, in, nil
	s.calls[sid] = c
	return cloneCall(c), nil
}

func (s *Calls) StartCallStep(_ context.Context, sid string, n int, claimedAt, at time.Time) (voiceops.Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[sid]
	if !ok || c.Expired(at) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	if c.Steps != n || !c.InFlight() || c.StepAt == nil || !c.StepAt.Equal(claimedAt) || c.StepStarted != nil {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	c.StepStarted = &at
	s.calls[sid] = c
	return cloneCall(c), nil
}

func (s *Calls) ReplyCallStep(_ context.Context, sid, conversationID string, reply voiceops.CallReply, at time.Time) (voiceops.Call, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.calls[sid]
	if !ok || c.Expired(at) {
		return voiceops.Call{}, voiceops.ErrNotFound
	}
	if c.Steps != reply.Step || !c.InFlight() {
		return voiceops.Call{}, voiceops.ErrCallTransition
	}
	if reply.Step == 1 {
		g := reply
		c.Greeting, c.ConversationID = &g, conversationID
	}
	c.Reply, c.StepInput = &reply, voiceops.CallStepInput{}
	s.calls[sid] = c
	return cloneCall(c), nil
}

// Pacer is the in-memory pacer: per account, the next free slot and the
// rate the operator set.
type Pacer struct {
	mu    sync.Mutex
	next  map[string]time.Time
	rates map[string]float64
}

// NewPacer returns a pacer where every account has the default rate.
func NewPacer() *Pacer { return &Pacer{next: map[string]time.Time{}, rates: map[string]float64{}} }

var _ voiceops.Pacer = (*Pacer)(nil)

// SetRate sets an account's outbound rate (calls per second; 0: default).
func (p *Pacer) SetRate(_ context.Context, accountID string, rate float64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rates[accountID] = rate
	return nil
}

func (p *Pacer) ReserveSlot(_ context.Context, accountID string, now time.Time) (time.Time, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	slot := now
	if n := p.next[accountID]; n.After(now) {
		slot = n
	}
	p.next[accountID] = slot.Add(voiceops.SlotInterval(p.rates[accountID]))
	return slot, nil
}
