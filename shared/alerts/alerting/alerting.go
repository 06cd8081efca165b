// Package alerting is the domain service behind the alert rule and webhook
// endpoint routes: it reads, applies a change, writes under the record's
// version (retrying when another writer got there first), and fans out the
// events a transition sends. Handlers parse, call one method, and answer.
package alerting

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Fanout hands an event the store holds to the delivery machinery
// (shared/alerts/delivery's Outbox.Fanout).
type Fanout func(ctx context.Context, e voiceops.AlertEvent) error

// Service changes rules and endpoints. Fanout may be nil: the events are
// stored with the change, and the evaluator's repair pass fans them out.
//
// An enabled rule it creates or changes is written marked Wake, so that
// the store wakes its scope in the rule's own write (voiceops.RuleStore,
// wake-ups): the evaluator evaluates the new rule within about a second
// when its scope has data, and the schedule does anyway within the minute.
type Service struct {
	Rules     voiceops.RuleStore
	Endpoints voiceops.EndpointStore
	Fanout    Fanout
	Now       func() time.Time
	Log       *slog.Logger
}

// updateAttempts bounds the optimistic-concurrency retries of a change:
// only a concurrent writer of the same record makes a second attempt
// necessary.
const updateAttempts = 3

func (s *Service) now() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

// CreateRule stores a new rule of the account from a create body (a patch
// that sends the required fields).
func (s *Service) CreateRule(ctx context.Context, accountID string, body voiceops.RulePatch) (voiceops.AlertRule, error) {
	rule := voiceops.NewRuleFrom(voiceops.NewID(voiceops.PrefixRule), accountID, body, s.now())
	rule.Wake = rule.Enabled
	if err := s.Rules.CreateRule(ctx, rule); err != nil {
		return rule, err
	}
	return rule, nil
}

// PatchRule applies a patch to a rule. Disabling a firing rule resolves it:
// the event is written with the change (docs/alerting.md).
func (s *Service) PatchRule(ctx context.Context, accountID, id string, patch voiceops.RulePatch) (voiceops.AlertRule, error) {
	for attempt := 1; ; attempt++ {
		cur, err := s.Rules.GetRule(ctx, accountID, id)
		if err != nil {
			return cur, err
		}
		next, changed := patch.Apply(cur, s.now())
		if !changed {
			return cur, nil
		}
		next.Version = cur.Version + 1
		next.Wake = next.Enabled
		// A disable tells the receivers of the state they were last told
		// of, which a silence may have left behind the rule's.
		prev := cur.State
		if next.State != cur.State {
			prev, next.SilencedFrom = cur.Announced(), ""
		}
		var events []voiceops.AlertEvent
		if ev := voiceops.TransitionEvent(prev, &next, next.UpdatedAt); ev != nil {
			events = append(events, *ev)
			if next.Change != nil {
				next.Change.EventID = ev.ID // the history entry names the event it sent
			}
		}
		err = s.Rules.UpdateRule(ctx, next, cur.Version, patch.ProjectChanged(cur), events...)
		if errors.Is(err, voiceops.ErrConflictingWrite) && attempt < updateAttempts {
			continue
		}
		if err != nil {
			return cur, err
		}
		s.fanout(ctx, events)
		return next, nil
	}
}

// DeleteRule removes a rule. Deleting a firing rule resolves it; the
// resolved event says the rule is now "unknown" (it no longer exists to be
// evaluated).
func (s *Service) DeleteRule(ctx context.Context, accountID, id string) error {
	now := s.now()
	var events []voiceops.AlertEvent
	_, err := s.Rules.DeleteRule(ctx, accountID, id, func(cur voiceops.AlertRule) []voiceops.AlertEvent {
		gone := cur
		gone.State, gone.SilencedFrom = voiceops.StateUnknown, ""
		events = nil
		if ev := voiceops.TransitionEvent(cur.Announced(), &gone, now); ev != nil {
			events = append(events, *ev)
		}
		return events
	})
	if err != nil {
		return err
	}
	s.fanout(ctx, events)
	return nil
}

// CreateEndpoint stores a new endpoint of the account with its first
// signing secret.
func (s *Service) CreateEndpoint(ctx context.Context, accountID, secret string, in voiceops.EndpointInput) (voiceops.WebhookEndpoint, error) {
	e := voiceops.NewEndpoint(voiceops.NewID(voiceops.PrefixEndpoint), accountID, secret, in, s.now())
	return e, s.Endpoints.CreateEndpoint(ctx, e)
}

// PatchEndpoint applies a patch to an endpoint.
func (s *Service) PatchEndpoint(ctx context.Context, accountID, id string, patch voiceops.EndpointPatch) (voiceops.WebhookEndpoint, error) {
	cur, err := s.Endpoints.GetEndpoint(ctx, accountID, id)
	if err != nil {
		return cur, err
	}
	return s.PatchReadEndpoint(ctx, cur, patch)
}

// PatchReadEndpoint applies a patch to cur, the endpoint as the caller has
// just read it, without reading it again: the write is conditional on
// cur's version, and only a write in between makes it read the endpoint
// again (then the patch applies to what it finds).
func (s *Service) PatchReadEndpoint(ctx context.Context, cur voiceops.WebhookEndpoint, patch voiceops.EndpointPatch) (voiceops.WebhookEndpoint, error) {
	now := s.now()
	return s.updateEndpoint(ctx, cur.AccountID, cur.ID, &cur, func(cur voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool) {
		return patch.Apply(cur, now)
	})
}

// RotateSecret makes secret the endpoint's signing secret; the previous one
// keeps signing for overlap.
func (s *Service) RotateSecret(ctx context.Context, accountID, id, secret string, overlap time.Duration) (voiceops.WebhookEndpoint, error) {
	now := s.now()
	return s.updateEndpoint(ctx, accountID, id, nil, func(cur voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool) {
		return voiceops.RotateSecret(cur, secret, overlap, now), true
	})
}

// updateEndpoint reads, changes and conditionally writes an endpoint,
// retrying when another writer got there first. A read endpoint (read not
// nil) stands for the first read.
func (s *Service) updateEndpoint(ctx context.Context, accountID, id string, read *voiceops.WebhookEndpoint, change func(voiceops.WebhookEndpoint) (voiceops.WebhookEndpoint, bool)) (voiceops.WebhookEndpoint, error) {
	for attempt := 1; ; attempt++ {
		var cur voiceops.WebhookEndpoint
		var err error
		if read != nil {
			cur, read = *read, nil
		} else if cur, err = s.Endpoints.GetEndpoint(ctx, accountID, id); err != nil {
			return cur, err
		}
		next, changed := change(cur)
		if !changed {
			return cur, nil
		}
		next.Version = cur.Version + 1
		err = s.Endpoints.UpdateEndpoint(ctx, next, cur.Version)
		if errors.Is(err, voiceops.ErrConflictingWrite) && attempt < updateAttempts {
			continue
		}
		if err != nil {
			return cur, err
		}
		return next, nil
	}
}

// fanout hands events to the outbox, best effort: the events are stored,
// and a failure here is repaired by the evaluator's next run.
func (s *Service) fanout(ctx context.Context, events []voiceops.AlertEvent) {
	if s.Fanout == nil {
		return
	}
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	for _, e := range events {
		if err := s.Fanout(ctx, e); err != nil {
			log.ErrorContext(ctx, "fanning out an event; the evaluator will retry", "event_id", e.ID, "error", err)
		}
	}
}
