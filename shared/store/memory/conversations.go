package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// storedConversation is a conversation and its turns as the store keeps
// them. The free-form maps are kept as JSON and decoded on every read, so
// that callers never share them with the store and read back exactly what
// the DynamoDB store gives (JSON values: float64 numbers, []any, map[string]any).
type storedConversation struct {
	c            voiceops.Conversation // IntegrationAttributes and State nil
	attrs, state []byte                // JSON; nil when the map was nil
	turns        []storedTurn          // in index order
	// turnsExpireAt is the expiry the conversation had at creation: the
	// DynamoDB store's turns carry it (see ConversationStore there).
	turnsExpireAt time.Time
}

type storedTurn struct {
	t                  voiceops.Turn // Entities and Metadata nil
	entities, metadata []byte
}

func encodeJSON(what string, v any, isNil bool) ([]byte, error) {
	if isNil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("memory: encoding %s: %w", what, err)
	}
	return b, nil
}

func decodeJSON[T any](b []byte) T {
	var v T
	if b != nil {
		_ = json.Unmarshal(b, &v) // encoded by encodeJSON: always valid
	}
	return v
}

func storeConversation(c voiceops.Conversation) (*storedConversation, error) {
	attrs, err := encodeJSON("integration_attributes", c.IntegrationAttributes, c.IntegrationAttributes == nil)
	if err != nil {
		return nil, err
	}
	state, err := encodeJSON("state", c.State, c.State == nil)
	if err != nil {
		return nil, err
	}
	c.IntegrationAttributes, c.State = nil, nil
	c.Metrics = slices.Clone(c.Metrics)
	if err := checkItem(c, len(attrs)+len(state)); err != nil {
		return nil, err
	}
	if c.EndedAt != nil {
		end := *c.EndedAt
		c.EndedAt = &end
	}
	return &storedConversation{c: c, attrs: attrs, state: state}, nil
}

func (sc *storedConversation) conversation() voiceops.Conversation {
	c := sc.c
	if c.EndedAt != nil {
		end := *c.EndedAt
		c.EndedAt = &end
	}
	c.IntegrationAttributes = decodeJSON[map[string]any](sc.attrs)
	c.State = decodeJSON[map[string]any](sc.state)
	c.Metrics = slices.Clone(c.Metrics)
	return c
}

func storeTurn(t voiceops.Turn) (storedTurn, error) {
	entities, err := encodeJSON("entities", t.Entities, t.Entities == nil)
	if err != nil {
		return storedTurn{}, err
	}
	metadata, err := encodeJSON("metadata", t.Metadata, t.Metadata == nil)
	if err != nil {
		return storedTurn{}, err
	}
	t.Entities, t.Metadata = nil, nil
	if err := checkItem(t, len(entities)+len(metadata)); err != nil {
		return storedTurn{}, err
	}
	t.Intents = slices.Clone(t.Intents)
	return storedTurn{t: t, entities: entities, metadata: metadata}, nil
}

func (st storedTurn) turn() voiceops.Turn {
	t := st.t
	t.Intents = slices.Clone(t.Intents)
	t.Entities = decodeJSON[[]map[string]any](st.entities)
	t.Metadata = decodeJSON[map[string]any](st.metadata)
	return t
}

// checkConversationKey refuses a conversation the DynamoDB store could not
// file under its ID: the ID must carry StartedAt's millisecond.
func checkConversationKey(c voiceops.Conversation) error {
	started, _, ok := voiceops.ParseConversationID(c.ID)
	if !ok {
		return fmt.Errorf("memory: %q is not a conversation ID", c.ID)
	}
	if c.StartedAt.UnixMilli() != started.UnixMilli() {
		return fmt.Errorf("memory: conversation %s: StartedAt %s is not the millisecond its ID carries", c.ID, c.StartedAt.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func checkVersion(c voiceops.Conversation, expectVersion int64) error {
	if c.Version != expectVersion+1 {
		return fmt.Errorf("memory: conversation %s: version %d must be expectVersion+1 = %d", c.ID, c.Version, expectVersion+1)
	}
	return nil
}

func checkTurnIndex(t voiceops.Turn) error {
	if t.Index < 0 || t.Index > voiceops.MaxTurnIndex {
		return fmt.Errorf("memory: turn index %d out of range", t.Index)
	}
	return nil
}

// liveConversationLocked returns a conversation that exists and has not expired; the
// caller holds s.mu.
func (s *Store) liveConversationLocked(accountID, projectID, id string) (*storedConversation, bool) {
	sc, ok := s.conversations[accountID][projectID][id]
	if !ok || conversationExpired(sc.c.ExpiresAt, s.now()) {
		return nil, false
	}
	return sc, true
}

// conversationExpired reports whether a record expiring at exp (zero: never)
// is gone at now.
func conversationExpired(exp, now time.Time) bool {
	return !exp.IsZero() && !now.Before(exp)
}

func (s *Store) CreateConversation(_ context.Context, c voiceops.Conversation, first *voiceops.Turn) error {
	if err := checkConversationKey(c); err != nil {
		return err
	}
	sc, err := storeConversation(c)
	if err != nil {
		return err
	}
	sc.turnsExpireAt = c.ExpiresAt
	if first != nil {
		if err := checkTurnIndex(*first); err != nil {
			return err
		}
		st, err := storeTurn(*first)
		if err != nil {
			return err
		}
		sc.turns = []storedTurn{st}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conversations[c.AccountID][c.ProjectID][c.ID]; ok {
		return voiceops.ErrAlreadyExists
	}
	if s.conversations[c.AccountID] == nil {
		s.conversations[c.AccountID] = map[string]map[string]*storedConversation{}
	}
	if s.conversations[c.AccountID][c.ProjectID] == nil {
		s.conversations[c.AccountID][c.ProjectID] = map[string]*storedConversation{}
	}
	s.conversations[c.AccountID][c.ProjectID][c.ID] = sc
	return nil
}

func (s *Store) GetConversation(_ context.Context, accountID, projectID, conversationID string) (voiceops.Conversation, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sc, ok := s.liveConversationLocked(accountID, projectID, conversationID)
	if !ok {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	return sc.conversation(), nil
}

func (s *Store) AddTurn(_ context.Context, c voiceops.Conversation, t voiceops.Turn, expectVersion int64) error {
	if err := checkConversationKey(c); err != nil {
		return err
	}
	if err := checkVersion(c, expectVersion); err != nil {
		return err
	}
	if err := checkTurnIndex(t); err != nil {
		return err
	}
	next, err := storeConversation(c)
	if err != nil {
		return err
	}
	st, err := storeTurn(t)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.liveConversationLocked(c.AccountID, c.ProjectID, c.ID)
	if !ok {
		return voiceops.ErrNotFound
	}
	if cur.c.Version != expectVersion {
		return voiceops.ErrConflictingWrite
	}
	// Turns only go forward (ConversationStore): a turn at or below the
	// last stored index is refused, as DynamoDB's commit refuses one below
	// turns_to.
	if n := len(cur.turns); n > 0 && cur.turns[n-1].t.Index >= t.Index {
		return voiceops.ErrAlreadyExists
	}
	// Readers copy turns out under the lock, so the stored slice can grow
	// in place: a turn costs the same however long the conversation.
	next.turns = append(cur.turns, st)
	next.turnsExpireAt = cur.turnsExpireAt
	s.conversations[c.AccountID][c.ProjectID][c.ID] = next
	return nil
}

func (s *Store) UpdateConversation(_ context.Context, c voiceops.Conversation, expectVersion int64) error {
	if err := checkConversationKey(c); err != nil {
		return err
	}
	if err := checkVersion(c, expectVersion); err != nil {
		return err
	}
	next, err := storeConversation(c)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.liveConversationLocked(c.AccountID, c.ProjectID, c.ID)
	if !ok {
		return voiceops.ErrNotFound
	}
	if cur.c.Version != expectVersion {
		return voiceops.ErrConflictingWrite
	}
	next.turns, next.turnsExpireAt = cur.turns, cur.turnsExpireAt
	s.conversations[c.AccountID][c.ProjectID][c.ID] = next
	return nil
}

func (s *Store) Turns(_ context.Context, accountID, projectID, conversationID string) ([]voiceops.Turn, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sc, ok := s.conversations[accountID][projectID][conversationID]
	if !ok || conversationExpired(sc.turnsExpireAt, s.now()) {
		return nil, voiceops.ErrNotFound
	}
	out := make([]voiceops.Turn, len(sc.turns))
	for i, st := range sc.turns {
		out[i] = st.turn()
	}
	return out, nil
}

// ListConversations returns up to limit conversations of a project that
// started in [from, to) (at the millisecond their IDs carry), after the
// conversation ID after ("" for the first page), in ID order: ascending by
// start time, then ID. Turns are not included.
func (s *Store) ListConversations(_ context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	return s.listConversations(accountID, projectID, from, to, after, limit, func(sc *storedConversation) voiceops.Conversation {
		return sc.conversation()
	})
}

// ListConversationIntervals is ListConversations returning only ID,
// AccountID, ProjectID, Environment, Channel, VariantID, VariantName,
// FromNumber, ToNumber, ASRLang, TTSLang, StartedAt, EndedAt, EndReason,
// InProgress and ExpiresAt (the others are zero): the read of the
// concurrency sweep and of offsets skipped over.
func (s *Store) ListConversationIntervals(_ context.Context, accountID, projectID string, from, to time.Time, after string, limit int) ([]voiceops.Conversation, error) {
	return s.listConversations(accountID, projectID, from, to, after, limit, func(sc *storedConversation) voiceops.Conversation {
		return intervalOf(sc.c)
	})
}

// intervalOf keeps the fields of an interval read.
func intervalOf(c voiceops.Conversation) voiceops.Conversation {
	out := voiceops.Conversation{
		ID: c.ID, AccountID: c.AccountID, ProjectID: c.ProjectID, Environment: c.Environment, Channel: c.Channel,
		VariantID: c.VariantID, VariantName: c.VariantName, FromNumber: c.FromNumber, ToNumber: c.ToNumber,
		ASRLang: c.ASRLang, TTSLang: c.TTSLang, StartedAt: c.StartedAt, EndReason: c.EndReason, InProgress: c.InProgress,
		ExpiresAt: c.ExpiresAt, IdleDue: c.IdleDue,
	}
	if c.EndedAt != nil {
		end := *c.EndedAt
		out.EndedAt = &end
	}
	return out
}

func (s *Store) listConversations(accountID, projectID string, from, to time.Time, after string, limit int, read func(*storedConversation) voiceops.Conversation) ([]voiceops.Conversation, error) {
	if after != "" && !voiceops.ValidConversationID(after) {
		return nil, voiceops.ErrInvalidCursor
	}
	if limit <= 0 {
		return nil, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.now()
	var ids []string
	for id, sc := range s.conversations[accountID][projectID] {
		started := time.UnixMilli(sc.c.StartedAt.UnixMilli())
		if started.Before(from) || !started.Before(to) || id <= after || conversationExpired(sc.c.ExpiresAt, now) {
			continue
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, strings.Compare)
	ids = ids[:min(len(ids), limit)]
	out := make([]voiceops.Conversation, len(ids))
	for i, id := range ids {
		out[i] = read(s.conversations[accountID][projectID][id])
	}
	return out, nil
}

// ConversationBySharedID returns the live conversation of the project whose
// SharedID is sharedID, by a scan of the project's conversations (of
// several, the one with the smallest ID).
func (s *Store) ConversationBySharedID(_ context.Context, accountID, projectID, sharedID string) (voiceops.Conversation, error) {
	if sharedID == "" {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.now()
	var found *storedConversation
	for id, sc := range s.conversations[accountID][projectID] {
		if sc.c.SharedID == sharedID && !conversationExpired(sc.c.ExpiresAt, now) && (found == nil || id < found.c.ID) {
			found = sc
		}
	}
	if found == nil {
		return voiceops.Conversation{}, voiceops.ErrNotFound
	}
	return found.conversation(), nil
}

// DueConversations returns the live conversations in progress whose
// IdleDue is at or before `before`, earliest first (then by ID), by a scan
// of every conversation (the DynamoDB store reads a sparse index instead).
func (s *Store) DueConversations(_ context.Context, before time.Time, limit int) ([]voiceops.Conversation, error) {
	if limit <= 0 {
		return nil, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.now()
	var out []voiceops.Conversation
	for _, projects := range s.conversations {
		for _, convs := range projects {
			for _, sc := range convs {
				if !sc.c.InProgress || sc.c.IdleDue.IsZero() || sc.c.IdleDue.After(before) || conversationExpired(sc.c.ExpiresAt, now) {
					continue
				}
				out = append(out, sc.conversation())
			}
		}
	}
	slices.SortFunc(out, func(a, b voiceops.Conversation) int {
		if c := a.IdleDue.Compare(b.IdleDue); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), limit)], nil
}

var _ voiceops.TurnsRunReader = (*Store)(nil)

// TurnsBetween returns the turns of every live conversation of the project
// with an ID in [first, last], as Turns would (first and last must carry
// the same start hour, as in the DynamoDB store).
func (s *Store) TurnsBetween(ctx context.Context, accountID, projectID, first, last string) (map[string][]voiceops.Turn, error) {
	a, _, okA := voiceops.ParseConversationID(first)
	b, _, okB := voiceops.ParseConversationID(last)
	if !okA || !okB || last < first || !a.Truncate(time.Hour).Equal(b.Truncate(time.Hour)) {
		return nil, fmt.Errorf("memory: TurnsBetween: %q..%q is not a range of conversation IDs of one hour", first, last)
	}
	s.mu.RLock()
	var ids []string
	for id := range s.conversations[accountID][projectID] {
		if id >= first && id <= last {
			ids = append(ids, id)
		}
	}
	s.mu.RUnlock()
	out := map[string][]voiceops.Turn{}
	for _, id := range ids {
		turns, err := s.Turns(ctx, accountID, projectID, id)
		if errors.Is(err, voiceops.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = turns
	}
	return out, nil
}

var _ voiceops.PageTurnsReader = (*Store)(nil)

// PageTurns returns the turns of each of convs that is a live conversation
// of the project, as Turns would.
func (s *Store) PageTurns(ctx context.Context, accountID, projectID string, convs []voiceops.Conversation) (map[string][]voiceops.Turn, error) {
	out := map[string][]voiceops.Turn{}
	for _, c := range convs {
		turns, err := s.Turns(ctx, accountID, projectID, c.ID)
		if errors.Is(err, voiceops.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[c.ID] = turns
	}
	return out, nil
}
