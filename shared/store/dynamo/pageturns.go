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

// convCache remembers, by conversation ID and version, what this store
// last read or wrote of that very state of the conversation (the version
// makes an entry exact): its turns_to, for PageTurns and the next write's
// commit (turnwrite.go), and its shared ID item, which the next write
// need not write again (sharedid.go). Bounded: past its size it starts
// over.
type convCache struct {
	mu sync.Mutex
	m  map[string]seenConv
}

// seenConv is what a convCache keeps of one state of a conversation.
type seenConv struct {
	turnsTo int64  // -1: unknown (an item written before turns_to)
	shared  string // sharedIDContent of the item: "" without a shared ID
}

// seenOf is what a conversation item tells of its state.
func seenOf(conv item) seenConv {
	return seenConv{turnsTo: numOf(conv, attrTurnsTo), shared: sharedIDContent(conv)}
}

const convCacheMax = 16384

func newConvCache() *convCache { return &convCache{m: map[string]seenConv{}} }

func (c *convCache) put(id string, version int64, seen seenConv) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= convCacheMax {
		clear(c.m)
	}
	c.m[fmt.Sprintf("%s#%d", id, version)] = seen
}

func (c *convCache) get(id string, version int64) (seenConv, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen, ok := c.m[fmt.Sprintf("%s#%d", id, version)]
	return seen, ok
}

// PageTurns returns the committed turns of the conversations this store
// just listed (ListConversations), by ID: BatchGetItems of their turn
// keys, in parallel, eventually consistent like the listing. A
// conversation it cannot read this way is missing from the map.
func (s *Conversations) PageTurns(ctx context.Context, accountID, projectID string, convs []voiceops.Conversation) (map[string][]voiceops.Turn, error) {
	out := map[string][]voiceops.Turn{}
	var keys []item
	for _, c := range convs {
		seen, ok := s.listed.get(c.ID, c.Version)
		if !ok || seen.turnsTo < 0 || c.AccountID != accountID || c.ProjectID != projectID {
			continue
		}
		out[c.ID] = []voiceops.Turn{}
		for i := range seen.turnsTo {
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
