// Package memory is the in-memory implementation of the stores: the embedded
// default of the dev server. It passes the same contract suite
// (shared/store/storetest) as the DynamoDB implementation. Values are copied in and
// out, so callers never share mutable state with the store.
package memory

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Store holds every kind of record behind one lock: simple, and fast enough
// for a dev server and for benchmarks of the layers above it.
type Store struct {
	mu        sync.RWMutex
	accounts  map[string]voiceops.Account
	projects  map[string]map[string]voiceops.Project
	keys      map[string]voiceops.Key // by digest
	rules     map[string]map[string]voiceops.AlertRule
	endpoints map[string]map[string]voiceops.WebhookEndpoint
	// events and deliveries by account, then by ID (events.go,
	// deliveries.go).
	events     map[string]map[string]voiceops.AlertEvent
	deliveries map[string]map[string]voiceops.Delivery
	// conversations by account, then project, then ID (conversations.go).
	conversations map[string]map[string]map[string]*storedConversation
	// agentConfigs by account, then project (agentconfig.go); made on
	// first use.
	agentConfigs map[string]map[string][]byte
	// dni holds the DNI pools by account and project, then number (dni.go);
	// made on first use.
	dni map[[2]string]map[string]*dniNumber
	// marks holds the evaluator's marks by account, then project ("" for
	// the account-wide rules); made on first use. An account's map is
	// never changed once stored (a mark replaces it with a changed copy):
	// Marks, read by every rules list, hands it out without a copy.
	marks map[string]map[string]time.Time
	// history holds the rules' state changes by account, then rule
	// (history.go); made on first use.
	history map[string]map[string][]voiceops.StateChange
	// silences by account, then ID (silences.go); made on first use.
	silences map[string]map[string]voiceops.Silence
	// destinations holds the accounts' destination policies
	// (destinations.go); made on first use.
	destinations map[string]voiceops.DestinationPolicy
	// now tells expired events and deliveries (DeliveryLogTTL) apart.
	now func() time.Time
	// wake is the wake-up listener (WakeWith); nil wakes nothing.
	wake func(ctx context.Context, accountID, projectID string, at time.Time) error
}

// WakeWith sets f to be called with the scope of each wake-up the store
// writes (voiceops.RuleStore, wake-ups: a rule written marked Wake, a
// silence ended), once the write is made and outside the store's lock, so
// that f may evaluate the scope at once: memory.Metrics.Touch, whose
// listener the dev server's trigger is. Set it before the store is used.
// Its error is not the write's, which is made: the schedule evaluates the
// scope anyway.
func (s *Store) WakeWith(f func(ctx context.Context, accountID, projectID string, at time.Time) error) {
	s.wake = f
}

// wakeScope calls the wake-up listener, if any, for a scope.
func (s *Store) wakeScope(ctx context.Context, accountID, projectID string, at time.Time) {
	if s.wake != nil {
		_ = s.wake(ctx, accountID, projectID, at)
	}
}

// wakeRule wakes r's scope when r is marked Wake.
func (s *Store) wakeRule(ctx context.Context, r voiceops.AlertRule) {
	if !r.Wake {
		return
	}
	project := ""
	if r.ProjectID != nil {
		project = *r.ProjectID
	}
	s.wakeScope(ctx, r.AccountID, project, r.UpdatedAt)
}

// New returns an empty store.
func New() *Store {
	return &Store{
		accounts:  map[string]voiceops.Account{},
		projects:  map[string]map[string]voiceops.Project{},
		keys:      map[string]voiceops.Key{},
		rules:     map[string]map[string]voiceops.AlertRule{},
		endpoints: map[string]map[string]voiceops.WebhookEndpoint{},

		events:        map[string]map[string]voiceops.AlertEvent{},
		deliveries:    map[string]map[string]voiceops.Delivery{},
		conversations: map[string]map[string]map[string]*storedConversation{},
		now:           time.Now,
	}
}

// Stores returns the store behind every interface of the domain.
func (s *Store) Stores() voiceops.Stores {
	return voiceops.Stores{Accounts: s, Rules: s, Endpoints: s, Events: s, Deliveries: s, Conversations: s, Evaluations: s, History: s, Silences: s}
}

var (
	_ voiceops.AccountStore      = (*Store)(nil)
	_ voiceops.RuleStore         = (*Store)(nil)
	_ voiceops.EndpointStore     = (*Store)(nil)
	_ voiceops.EventStore        = (*Store)(nil)
	_ voiceops.DeliveryStore     = (*Store)(nil)
	_ voiceops.ConversationStore = (*Store)(nil)
	_ voiceops.EvaluationStore   = (*Store)(nil)
)

// MarkEvaluated keeps the latest mark of the scope.
func (s *Store) MarkEvaluated(_ context.Context, accountID, projectID string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks == nil {
		s.marks = map[string]map[string]time.Time{}
	}
	if cur, ok := s.marks[accountID][projectID]; !ok || at.After(cur) {
		next := make(map[string]time.Time, len(s.marks[accountID])+1)
		maps.Copy(next, s.marks[accountID])
		next[projectID] = at.UTC()
		s.marks[accountID] = next
	}
	return nil
}

// Mark returns the scope's mark (zero when none).
func (s *Store) Mark(_ context.Context, accountID, projectID string) (time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.marks[accountID][projectID], nil
}

// InProcess reports that the store's reads make no round trip
// (alerting.InProcess).
func (s *Store) InProcess() bool { return true }

// Marks returns the account's marks: the stored map, which no write
// changes afterwards (MarkEvaluated), and which the caller only reads.
func (s *Store) Marks(_ context.Context, accountID string) (map[string]time.Time, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.marks[accountID], nil
}

func (s *Store) CreateAccount(_ context.Context, a voiceops.Account) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[a.ID]; ok {
		return voiceops.ErrAlreadyExists
	}
	s.accounts[a.ID] = a
	return nil
}

func (s *Store) GetAccount(_ context.Context, id string) (voiceops.Account, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a, ok := s.accounts[id]
	if !ok {
		return voiceops.Account{}, voiceops.ErrNotFound
	}
	return a, nil
}

func (s *Store) ListAccounts(_ context.Context) ([]voiceops.Account, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]voiceops.Account, 0, len(s.accounts))
	for _, a := range s.accounts {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b voiceops.Account) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *Store) CreateProject(_ context.Context, p voiceops.Project) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[p.AccountID]; !ok {
		return voiceops.ErrNotFound
	}
	if _, ok := s.projects[p.AccountID][p.ID]; ok {
		return voiceops.ErrAlreadyExists
	}
	if s.projects[p.AccountID] == nil {
		s.projects[p.AccountID] = map[string]voiceops.Project{}
	}
	s.projects[p.AccountID][p.ID] = p
	return nil
}

func (s *Store) GetProject(_ context.Context, accountID, projectID string) (voiceops.Project, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.projects[accountID][projectID]
	if !ok {
		return voiceops.Project{}, voiceops.ErrNotFound
	}
	return p, nil
}

func (s *Store) ListProjects(_ context.Context, accountID string) ([]voiceops.Project, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]voiceops.Project, 0, len(s.projects[accountID]))
	for _, p := range s.projects[accountID] {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b voiceops.Project) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *Store) CreateKey(_ context.Context, k voiceops.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[k.AccountID]; !ok {
		return voiceops.ErrNotFound
	}
	if k.ProjectID != "" {
		if _, ok := s.projects[k.AccountID][k.ProjectID]; !ok {
			return voiceops.ErrNotFound
		}
	}
	if _, ok := s.keys[k.Digest]; ok {
		return voiceops.ErrAlreadyExists
	}
	s.keys[k.Digest] = copyKey(k)
	return nil
}

func (s *Store) KeyByDigest(_ context.Context, digest string) (voiceops.Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.keys[digest]
	if !ok {
		return voiceops.Key{}, voiceops.ErrNotFound
	}
	return copyKey(k), nil
}

func (s *Store) ListKeys(_ context.Context, accountID string) ([]voiceops.Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []voiceops.Key
	for _, k := range s.keys {
		if k.AccountID == accountID {
			out = append(out, copyKey(k))
		}
	}
	slices.SortFunc(out, func(a, b voiceops.Key) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (s *Store) RevokeKey(_ context.Context, accountID, keyID string, at time.Time) (voiceops.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for d, k := range s.keys {
		if k.AccountID == accountID && k.ID == keyID {
			if k.RevokedAt == nil {
				k.RevokedAt = &at
				s.keys[d] = k
			}
			return copyKey(k), nil
		}
	}
	return voiceops.Key{}, voiceops.ErrNotFound
}

func (s *Store) CreateRule(ctx context.Context, r voiceops.AlertRule) error {
	if err := s.createRule(r); err != nil {
		return err
	}
	s.wakeRule(ctx, r)
	return nil
}

func (s *Store) createRule(r voiceops.AlertRule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[r.AccountID]; !ok {
		return voiceops.ErrNotFound
	}
	if r.ProjectID != nil {
		if _, ok := s.projects[r.AccountID][*r.ProjectID]; !ok {
			return voiceops.ErrProjectNotFound
		}
	}
	if len(s.rules[r.AccountID]) >= voiceops.MaxRulesPerAccount {
		return voiceops.ErrRuleLimit
	}
	if s.rules[r.AccountID] == nil {
		s.rules[r.AccountID] = map[string]voiceops.AlertRule{}
	}
	if _, ok := s.rules[r.AccountID][r.ID]; ok {
		return voiceops.ErrAlreadyExists
	}
	s.rules[r.AccountID][r.ID] = copyRule(r)
	return nil
}

func (s *Store) GetRule(_ context.Context, accountID, ruleID string) (voiceops.AlertRule, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.rules[accountID][ruleID]
	if !ok {
		return voiceops.AlertRule{}, voiceops.ErrNotFound
	}
	return copyRule(r), nil
}

func (s *Store) ListRules(_ context.Context, accountID string) ([]voiceops.AlertRule, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := copyRules(s.rules[accountID])
	voiceops.SortRules(out)
	return out, nil
}

// copyRules copies rules as copyRule does, their optional fields in one
// array per type, not one allocation each (a rules list made up to four
// per rule).
func copyRules(rules map[string]voiceops.AlertRule) []voiceops.AlertRule {
	out := make([]voiceops.AlertRule, 0, len(rules))
	var nStr, nTime, nInt int
	for _, r := range rules {
		nStr += count(r.ProjectID)
		nTime += count(r.Since) + count(r.LastEvaluatedAt)
		nInt += count(r.CurrentValue)
	}
	strs, times, ints := make([]string, 0, nStr), make([]time.Time, 0, nTime), make([]int64, 0, nInt)
	for _, r := range rules {
		r.ProjectID = cloneInto(&strs, r.ProjectID)
		r.Since = cloneInto(&times, r.Since)
		r.LastEvaluatedAt = cloneInto(&times, r.LastEvaluatedAt)
		r.CurrentValue = cloneInto(&ints, r.CurrentValue)
		r.Change, r.Wake = nil, false
		out = append(out, r)
	}
	return out
}

func count[T any](p *T) int {
	if p == nil {
		return 0
	}
	return 1
}

// cloneInto copies *p into the next element of *arr (made large enough),
// nil staying nil.
func cloneInto[T any](arr *[]T, p *T) *T {
	if p == nil {
		return nil
	}
	*arr = append(*arr, *p)
	return &(*arr)[len(*arr)-1]
}

func (s *Store) UpdateRule(ctx context.Context, r voiceops.AlertRule, expectVersion int64, checkProject bool, events ...voiceops.AlertEvent) error {
	if err := s.updateRule(r, expectVersion, checkProject, events); err != nil {
		return err
	}
	s.wakeRule(ctx, r)
	return nil
}

func (s *Store) updateRule(r voiceops.AlertRule, expectVersion int64, checkProject bool, events []voiceops.AlertEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.rules[r.AccountID][r.ID]
	if !ok {
		return voiceops.ErrNotFound
	}
	if cur.Version != expectVersion {
		return voiceops.ErrConflictingWrite
	}
	if checkProject && r.ProjectID != nil {
		if _, ok := s.projects[r.AccountID][*r.ProjectID]; !ok {
			return voiceops.ErrProjectNotFound
		}
	}
	for _, e := range events {
		if _, ok := s.events[e.AccountID][e.ID]; ok {
			return voiceops.ErrAlreadyExists
		}
	}
	s.rules[r.AccountID][r.ID] = copyRule(r)
	s.putChangeLocked(r)
	for _, e := range events {
		s.putEventLocked(e)
	}
	return nil
}

// ListEnabledRules returns the enabled rules of every account of a shard.
func (s *Store) ListEnabledRules(_ context.Context, shard int) ([]voiceops.AlertRule, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for acct, rules := range s.rules {
		if voiceops.RuleShardOf(acct) == shard {
			n += len(rules)
		}
	}
	out := make([]voiceops.AlertRule, 0, n) // rules are large: no regrowing
	for acct, rules := range s.rules {
		if voiceops.RuleShardOf(acct) != shard {
			continue
		}
		for _, r := range rules {
			if r.Enabled {
				out = append(out, copyRule(r))
			}
		}
	}
	voiceops.SortRules(out)
	return out, nil
}

func (s *Store) DeleteRule(_ context.Context, accountID, ruleID string, events func(voiceops.AlertRule) []voiceops.AlertEvent) (voiceops.AlertRule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rules[accountID][ruleID]
	if !ok {
		return voiceops.AlertRule{}, voiceops.ErrNotFound
	}
	delete(s.rules[accountID], ruleID)
	if events != nil {
		for _, e := range events(copyRule(r)) {
			s.putEventLocked(e)
		}
	}
	return r, nil
}

func (s *Store) CreateEndpoint(_ context.Context, e voiceops.WebhookEndpoint) error {
	if err := checkItem(e, 0); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.accounts[e.AccountID]; !ok {
		return voiceops.ErrNotFound
	}
	if len(s.endpoints[e.AccountID]) >= voiceops.MaxEndpointsPerAccount {
		return voiceops.ErrEndpointLimit
	}
	if s.endpoints[e.AccountID] == nil {
		s.endpoints[e.AccountID] = map[string]voiceops.WebhookEndpoint{}
	}
	if _, ok := s.endpoints[e.AccountID][e.ID]; ok {
		return voiceops.ErrAlreadyExists
	}
	s.endpoints[e.AccountID][e.ID] = copyEndpoint(e)
	return nil
}

func (s *Store) GetEndpoint(_ context.Context, accountID, endpointID string) (voiceops.WebhookEndpoint, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.endpoints[accountID][endpointID]
	if !ok {
		return voiceops.WebhookEndpoint{}, voiceops.ErrNotFound
	}
	return copyEndpoint(e), nil
}

func (s *Store) ListEndpoints(_ context.Context, accountID string) ([]voiceops.WebhookEndpoint, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]voiceops.WebhookEndpoint, 0, len(s.endpoints[accountID]))
	for _, e := range s.endpoints[accountID] {
		out = append(out, copyEndpoint(e))
	}
	voiceops.SortEndpoints(out)
	return out, nil
}

func (s *Store) UpdateEndpoint(_ context.Context, e voiceops.WebhookEndpoint, expectVersion int64) error {
	if err := checkItem(e, 0); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.endpoints[e.AccountID][e.ID]
	if !ok {
		return voiceops.ErrNotFound
	}
	if cur.Version != expectVersion {
		return voiceops.ErrConflictingWrite
	}
	s.endpoints[e.AccountID][e.ID] = copyEndpoint(e)
	return nil
}

func (s *Store) DeleteEndpoint(_ context.Context, accountID, endpointID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.endpoints[accountID][endpointID]; !ok {
		return voiceops.ErrNotFound
	}
	delete(s.endpoints[accountID], endpointID)
	return nil
}

func copyKey(k voiceops.Key) voiceops.Key {
	k.RevokedAt = clonePtr(k.RevokedAt)
	return k
}

func copyRule(r voiceops.AlertRule) voiceops.AlertRule {
	r.ProjectID = clonePtr(r.ProjectID)
	r.Since = clonePtr(r.Since)
	r.LastEvaluatedAt = clonePtr(r.LastEvaluatedAt)
	r.CurrentValue = clonePtr(r.CurrentValue)
	r.Change, r.Wake = nil, false // a history entry and a wake-up, never part of the rule
	return r
}

func copyEndpoint(e voiceops.WebhookEndpoint) voiceops.WebhookEndpoint {
	e.EventTypes = slices.Clone(e.EventTypes)
	h := make(map[string]string, len(e.Headers))
	for k, v := range e.Headers {
		h[k] = v
	}
	e.Headers = h
	e.PreviousExpiresAt = clonePtr(e.PreviousExpiresAt)
	return e
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
