package dynamo

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The hour index names the (hour, shard) partitions of a project that hold
// conversations, so that a listing over a long, sparse range reads only
// those. It is one partition per project, so reading it is one Query:
//
//	entry          pk=H#<acct>#<proj>          sk=<yyyymmddhh>#<shard>
//	legacy marker  pk=H#<acct>#<proj>          sk=~   (sorts after every entry)
//	old entry      pk=H#<acct>#<proj>#<shard>  sk=<yyyymmddhh>
//
// An entry is written about once per process, hour and shard (hourCache),
// so the one partition takes few writes however busy the project.
//
// Releases before this one wrote old entries, one partition per shard, and
// nothing copies them: they are read where they may matter, which the
// project's legacy marker says. Its "legacy" attribute is the newest hour
// of the project's old entries (absent: there are none), and it expires
// with the last of them. A listing with no marker reads every old entry of
// the project (4 Queries), and writes the marker once it is sure no process
// of the release before still writes old entries: when the new entries show
// that this release wrote the project's conversations at least
// legacySettle before (a stack update replaces every function within
// minutes; a rollback to the release before, deployed forward again, is
// the one case this misjudges: old entries its old code wrote after the
// marker are not read). With a marker, a listing reads old entries only for the hours
// up to its legacy hour, 4 range Queries; a project with none, or whose
// range starts later, reads the index in one Query. Markers are kept per
// process for legacyCacheFor; what the old entries said before a marker
// could be written, for legacyProbeFor (so a new project's listings read
// them once a minute, not every page, in its first hours: a conversation
// the release before starts during a stack update may then be missing
// from one process's listings for that long).
const (
	skLegacyMarker = "~"
	attrLegacy     = "legacy"
	legacySettle   = 2 * time.Hour
	legacyCacheFor = time.Hour
	legacyProbeFor = time.Minute
	legacyCacheMax = 4096
)

// hourIndexPK is the project's hour index partition.
func hourIndexPK(accountID, projectID string) string {
	return fmt.Sprintf("%s%s#%s", pkConversationHrs, accountID, projectID)
}

// hourIndexSK is the sort key of an hour index entry.
func hourIndexSK(hour time.Time, shard int) string {
	return fmt.Sprintf("%s#%d", hour.UTC().Format(hourKeyLayout), shard)
}

// oldHourIndexPK is the partition of one shard's old entries.
func oldHourIndexPK(accountID, projectID string, shard int) string {
	return fmt.Sprintf("%s%s#%s#%d", pkConversationHrs, accountID, projectID, shard)
}

// legacyMark is what a project's legacy marker says.
type legacyMark struct {
	through string    // newest hour of old entries (hourKeyLayout), "" if none
	expires time.Time // when the last old entry expires (zero: never, or none)
}

// legacyCache keeps the legacy markers a process has read or written.
type legacyCache struct {
	mu sync.Mutex
	m  map[string]legacyCached
}

type legacyCached struct {
	mark legacyMark
	// until is when the process reads the marker (or the old entries)
	// again.
	until time.Time
}

func newLegacyCache() *legacyCache { return &legacyCache{m: map[string]legacyCached{}} }

func (c *legacyCache) get(pk string, now time.Time) (legacyMark, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[pk]
	if !ok || !now.Before(e.until) || !e.mark.expires.IsZero() && !now.Before(e.mark.expires) {
		return legacyMark{}, false
	}
	return e.mark, true
}

// put keeps m for d.
func (c *legacyCache) put(pk string, m legacyMark, now time.Time, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= legacyCacheMax {
		clear(c.m)
	}
	c.m[pk] = legacyCached{mark: m, until: now.Add(d)}
}

// conversationHours reads the hour index: the hours from first to last
// (inclusive) with conversations, and their shards, in order.
func (s *Conversations) conversationHours(ctx context.Context, op, accountID, projectID string, first, last time.Time) ([]hourShards, error) {
	pk := hourIndexPK(accountID, projectID)
	lo, hi := first.Format(hourKeyLayout), last.Format(hourKeyLayout)
	now := s.now()
	mark, known := s.legacy.get(pk, now)
	var entries []item
	var markErr, err error
	var wg sync.WaitGroup
	if !known {
		wg.Go(func() { mark, known, markErr = s.readLegacyMark(ctx, op, pk) })
	}
	entries, err = s.query(ctx, op, &dynamodb.QueryInput{
		TableName:                &s.table,
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK},
		// "<hi>#~" sorts after every entry of hour hi, before the next hour's.
		ExpressionAttributeValues: item{":pk": avS(pk), ":lo": avS(lo), ":hi": avS(hi + "#~")},
	})
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if markErr != nil {
		return nil, markErr
	}
	byHour := map[string][]int{}
	for _, it := range entries {
		sk := strOf(it, attrSK)
		h, shard, ok := strings.Cut(sk, "#")
		n, err := strconv.Atoi(shard)
		if !ok || err != nil || n < 0 || n >= voiceops.ConversationShards {
			return nil, wrap(op, fmt.Errorf("hour index sort key %q", sk))
		}
		byHour[h] = append(byHour[h], n)
	}
	var old [][]item
	switch {
	case !known:
		if old, mark, err = s.readOldHours(ctx, op, accountID, projectID); err != nil {
			return nil, err
		}
		keep := legacyProbeFor
		if settled(entries, now) {
			if err := s.writeLegacyMark(ctx, op, pk, mark); err != nil {
				return nil, err
			}
			keep = legacyCacheFor
		}
		s.legacy.put(pk, mark, now, keep)
	case mark.through >= lo:
		if old, err = s.readOldRange(ctx, op, accountID, projectID, lo, min(hi, mark.through)); err != nil {
			return nil, err
		}
	}
	for shard, items := range old {
		for _, it := range items {
			if h := strOf(it, attrSK); h >= lo && h <= hi && !slices.Contains(byHour[h], shard) {
				byHour[h] = append(byHour[h], shard)
			}
		}
	}
	out := make([]hourShards, 0, len(byHour))
	for h, shards := range byHour {
		t, err := time.Parse(hourKeyLayout, h)
		if err != nil {
			return nil, wrap(op, fmt.Errorf("hour index key %q: %w", h, err))
		}
		slices.Sort(shards)
		out = append(out, hourShards{hour: t, shards: shards})
	}
	slices.SortFunc(out, func(a, b hourShards) int { return a.hour.Compare(b.hour) })
	return out, nil
}

// settled reports whether the project's entries show this release writing
// its conversations at least legacySettle ago: no process of the release
// before is left to write old entries.
func settled(entries []item, now time.Time) bool {
	for _, it := range entries {
		h, _, _ := strings.Cut(strOf(it, attrSK), "#")
		if t, err := time.Parse(hourKeyLayout, h); err == nil && !t.Add(time.Hour+legacySettle).After(now) {
			return true
		}
	}
	return false
}

// readLegacyMark reads the project's legacy marker; known is false when
// there is none (or it has expired).
func (s *Conversations) readLegacyMark(ctx context.Context, op, pk string) (m legacyMark, known bool, err error) {
	it, found, err := s.get(ctx, op, key(pk, skLegacyMarker))
	if err != nil || !found {
		return legacyMark{}, false, err
	}
	m.through = strOf(it, attrLegacy)
	if n, ok := it[attrTTL].(*types.AttributeValueMemberN); ok {
		if sec, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			m.expires = time.Unix(sec, 0)
		}
	}
	s.legacy.put(pk, m, s.now(), legacyCacheFor)
	return m, true, nil
}

// writeLegacyMark stores the project's legacy marker.
func (s *Conversations) writeLegacyMark(ctx context.Context, op, pk string, m legacyMark) error {
	it := key(pk, skLegacyMarker)
	if m.through != "" {
		it[attrLegacy] = avS(m.through)
		if !m.expires.IsZero() { // an old entry without expiry keeps the marker for good
			it[attrTTL] = avN(m.expires.Unix())
		}
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: it}); err != nil {
		return wrap(op, err)
	}
	return nil
}

// readOldHours reads every live old entry of the project, per shard, and
// what its legacy marker is to say of them.
func (s *Conversations) readOldHours(ctx context.Context, op, accountID, projectID string) ([][]item, legacyMark, error) {
	old, err := eachOldShard(func(shard int) ([]item, error) {
		return s.query(ctx, op, &dynamodb.QueryInput{
			TableName:                 &s.table,
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPK},
			ExpressionAttributeValues: item{":pk": avS(oldHourIndexPK(accountID, projectID, shard))},
		})
	})
	if err != nil {
		return nil, legacyMark{}, err
	}
	var m legacyMark
	for _, items := range old {
		for _, it := range items {
			m.through = max(m.through, strOf(it, attrSK))
			if n, ok := it[attrTTL].(*types.AttributeValueMemberN); ok {
				if sec, err := strconv.ParseInt(n.Value, 10, 64); err == nil && time.Unix(sec, 0).After(m.expires) {
					m.expires = time.Unix(sec, 0)
				}
			}
		}
	}
	return old, m, nil
}

// readOldRange reads the project's old entries of the hours lo to hi.
func (s *Conversations) readOldRange(ctx context.Context, op, accountID, projectID, lo, hi string) ([][]item, error) {
	return eachOldShard(func(shard int) ([]item, error) {
		return s.query(ctx, op, &dynamodb.QueryInput{
			TableName:                &s.table,
			KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
			ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK},
			ExpressionAttributeValues: item{
				":pk": avS(oldHourIndexPK(accountID, projectID, shard)), ":lo": avS(lo), ":hi": avS(hi),
			},
		})
	})
}

// eachOldShard runs read for every shard's old partition, in parallel.
func eachOldShard(read func(shard int) ([]item, error)) ([][]item, error) {
	results := make([][]item, voiceops.ConversationShards)
	errs := make([]error, voiceops.ConversationShards)
	var wg sync.WaitGroup
	for shard := range voiceops.ConversationShards {
		wg.Go(func() { results[shard], errs[shard] = read(shard) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return results, nil
}
