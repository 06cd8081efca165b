package alerting

import (
	"context"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// markedRules is a RuleStore whose reads show the evaluator's marks: a rule
// that an evaluation found unchanged is not rewritten (one mark per scope
// is), so its own last_evaluated_at may be older than its last evaluation.
type markedRules struct {
	voiceops.RuleStore
	marks voiceops.EvaluationStore
	// inProcess: the marks are read without a round trip (InProcess), on
	// the request's goroutine.
	inProcess bool
}

// InProcess is implemented by a store whose reads make no round trip (the
// memory store): ListRules reads its marks on the request's goroutine, as
// a goroutine of their own would cost more than it saves (a tenth of the
// dev server's rules list).
type InProcess interface{ InProcess() bool }

// WithMarks returns rules whose GetRule and ListRules apply the scope's
// evaluation mark (voiceops.AlertRule.WithMark), at one more read each, in
// parallel with the rules': what the API's reads use, so that
// last_evaluated_at stays truthful. Writers (the Service, the
// evaluator) use the store itself.
func WithMarks(rules voiceops.RuleStore, marks voiceops.EvaluationStore) voiceops.RuleStore {
	if marks == nil {
		return rules
	}
	local, _ := marks.(InProcess)
	return markedRules{RuleStore: rules, marks: marks, inProcess: local != nil && local.InProcess()}
}

// GetRule reads the rule and the account's marks in parallel: the mark's
// key needs the rule's project, so it reads them all (one Query of the
// caller's account, like ListRules), and the request waits for one round
// trip, not two. The marks are dropped unread when the rule is missing,
// disabled or the read failed. An InProcess store reads the rule, then
// its scope's mark.
func (m markedRules) GetRule(ctx context.Context, accountID, ruleID string) (voiceops.AlertRule, error) {
	if m.inProcess {
		r, err := m.RuleStore.GetRule(ctx, accountID, ruleID)
		if err != nil || !r.Enabled {
			return r, err
		}
		mark, err := m.marks.Mark(ctx, accountID, projectOf(r))
		if err != nil {
			return voiceops.AlertRule{}, err
		}
		return r.WithMark(mark), nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type read struct {
		marks map[string]time.Time
		err   error
	}
	marked := make(chan read, 1)
	go func() {
		ms, err := m.marks.Marks(ctx, accountID)
		marked <- read{ms, err}
	}()
	r, err := m.RuleStore.GetRule(ctx, accountID, ruleID)
	if err != nil || !r.Enabled {
		cancel()
		<-marked // no read outlives the request
		return r, err
	}
	mr := <-marked
	if mr.err != nil {
		return voiceops.AlertRule{}, mr.err
	}
	return r.WithMark(mr.marks[projectOf(r)]), nil
}

// ListRules reads the rules and the account's marks in parallel: neither
// depends on the other, so the request waits for one round trip, not two
// (an account without rules reads its few marks for nothing). An
// InProcess store's are read one after the other.
func (m markedRules) ListRules(ctx context.Context, accountID string) ([]voiceops.AlertRule, error) {
	type read struct {
		marks map[string]time.Time
		err   error
	}
	var mr read
	var rules []voiceops.AlertRule
	var err error
	if m.inProcess {
		mr.marks, mr.err = m.marks.Marks(ctx, accountID)
		rules, err = m.RuleStore.ListRules(ctx, accountID)
	} else {
		marked := make(chan read, 1)
		go func() {
			ms, err := m.marks.Marks(ctx, accountID)
			marked <- read{ms, err}
		}()
		rules, err = m.RuleStore.ListRules(ctx, accountID)
		mr = <-marked
	}
	if err != nil || len(rules) == 0 {
		return rules, err
	}
	marks, err := mr.marks, mr.err
	if err != nil {
		return nil, err
	}
	for i, r := range rules {
		rules[i] = r.WithMark(marks[projectOf(r)])
	}
	return rules, nil
}

// projectOf is the project of a rule's scope, "" for an account-wide rule.
func projectOf(r voiceops.AlertRule) string {
	if r.ProjectID == nil {
		return ""
	}
	return *r.ProjectID
}
