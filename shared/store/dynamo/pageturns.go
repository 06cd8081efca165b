package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// A list page reads its conversations' turns by their keys: a listed
// conversation's item says how many turns it has committed (turns_to), so
// its turn keys are known, and a BatchGetItem reads 100 of them a call (a
// page of 30 conversations of 5 turns: 2 calls, in parallel). This costs
// no write (the turns index it replaces copied every turn: about 2 WRU a
// turn) and reads only committed turns. Conversations written before
// turns_to existed, or not listed by this store (the cache below), are
// left to TurnsBetween and Turns.

var _ voiceops.PageTurnsReader = (*Conversations)(nil)

// batchKeys is BatchGetItem's limit of keys per call.
const batchKeys = 100

// turnsToCache remembers the turns_to of listed conversations, by ID and
// version (the version makes an entry exact: the turns of that very
// state of the conversation). Bounded: past its size it starts over.
type turnsToCache struct {
	mu sync.Mutex
	m  map[string]int64
}

const turnsToCacheMax = 16384

func newTurnsToCache() *turnsToCache { return &turnsToCache{m: map[string]int64{}} }

func (c *turnsToCache) put(id string, version, turnsTo int64) {
	if turnsTo < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= turnsToCacheMax {
		clear(c.m)
	}
	c.m[fmt.Sprintf("%s#%d", id, version)] = turnsTo
}

func (c *turnsToCache) get(id string, version int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.m[fmt.Sprintf("%s#%d", id, version)]
	return n, ok
}

// PageTurns returns the committed turns of the conversations this store
// just listed (ListConversations), by ID: BatchGetItems of their turn
// keys, in parallel, eventually consistent like the listing. A
// conversation it cannot read this way is missing from the map.
func (s *Conversations) PageTurns(ctx context.Context, accountID, projectID string, convs []voiceops.Conversation) (map[string][]voiceops.Turn, error) {
	out := map[string][]voiceops.Turn{}
	var keys []item
	for _, c := range convs {
		n, ok := s.listed.get(c.ID, c.Version)
		if !ok || c.AccountID != accountID || c.ProjectID != projectID {
			continue
		}
		out[c.ID] = []voiceops.Turn{}
		for i := range n {
			keys = append(keys, turnKey(accountID, projectID, c.ID, int(i)))
		}
	}
	var chunks [][]item
	for k := range slices.Chunk(keys, batchKeys) {
		chunks = append(chunks, k)
	}
	results := make([][]item, len(chunks))
	errs := make([]error, len(chunks))
	var wg sync.WaitGroup
	for i, chunk := range chunks {
		wg.Go(func() { results[i], errs[i] = s.batchGet(ctx, "PageTurns", chunk) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	now := s.now()
	for _, items := range results {
		for _, it := range items {
			if expiredAt(it, now) {
				continue
			}
			pk, _ := it[attrPK].(*types.AttributeValueMemberS)
			if pk == nil {
				return nil, wrap("PageTurns", fmt.Errorf("turn item without a partition key"))
			}
			id := pk.Value[strings.LastIndex(pk.Value, "#")+1:]
			t, err := decodeTurn(it)
			if err != nil {
				return nil, wrap("PageTurns", err)
			}
			out[id] = append(out[id], t)
		}
	}
	for id, ts := range out {
		slices.SortFunc(ts, func(a, b voiceops.Turn) int { return a.Index - b.Index })
		out[id] = ts
	}
	return out, nil
}

// batchGet reads up to batchKeys items by key, again for those DynamoDB
// leaves unprocessed (with a backoff).
func (s *Conversations) batchGet(ctx context.Context, op string, keys []item) ([]item, error) {
	var out []item
	req := map[string]types.KeysAndAttributes{s.table: {Keys: keys}}
	for attempt := 1; ; attempt++ {
		res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, wrap(op, err)
		}
		out = append(out, res.Responses[s.table]...)
		if len(res.UnprocessedKeys[s.table].Keys) == 0 {
			return out, nil
		}
		req = res.UnprocessedKeys
		if err := Backoff(ctx, attempt); err != nil {
			return nil, wrap(op, err)
		}
	}
}
