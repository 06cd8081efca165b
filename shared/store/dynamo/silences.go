package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Silences (voiceops.SilenceStore) are items of the account's partition of
// the config table, keyed by their end so that the silences not ended are
// one Query of the key range after now, however many ended ones are kept:
//
//	pk=ACCT#<account>  sk=SIL#<13-digit unix ms of ends_at>#<id>
//	id, account_id, matchers (JSON), starts_at, ends_at, comment, created_at,
//	expires_at (ends_at + SilenceRetention)
//
// The account item's silences_version orders creates: a create reads it
// with the silences not ended, and writes the silence with the next
// version under a condition, so two creates never both take the 100th
// place (the count of silences not ended falls as time passes, so a
// counter like rule_count cannot hold it).
const (
	skSilence           = "SIL#"
	attrMatchers        = "matchers"
	attrStartsAt        = "starts_at"
	attrEndsAt          = "ends_at"
	attrComment         = "comment"
	attrSilencesVersion = "silences_version"
	// silenceAttempts bounds the retries of a create or an end that lost
	// a race with another.
	silenceAttempts = 5
)

var _ voiceops.SilenceStore = (*Config)(nil)

func silenceSK(endsAt time.Time, id string) string {
	return fmt.Sprintf("%s%013d#%s", skSilence, endsAt.UnixMilli(), id)
}

type matcherJSON struct {
	Name  voiceops.MatcherName `json:"name"`
	Value *string              `json:"value"`
}

func encodeSilence(s voiceops.Silence) item {
	ms := make([]matcherJSON, len(s.Matchers))
	for i, m := range s.Matchers {
		ms[i] = matcherJSON(m)
	}
	b, _ := json.Marshal(ms) // strings only: cannot fail
	it := key(pkAccount+s.AccountID, silenceSK(s.EndsAt, s.ID))
	it[attrID] = avS(s.ID)
	it[attrAccountID] = avS(s.AccountID)
	it[attrMatchers] = avS(string(b))
	it[attrStartsAt] = avT(s.StartsAt)
	it[attrEndsAt] = avT(s.EndsAt)
	setNonEmpty(it, attrComment, s.Comment)
	it[attrCreatedAt] = avT(s.CreatedAt)
	it[attrTTL] = avN(s.EndsAt.Add(voiceops.SilenceRetention).Unix())
	return it
}

func decodeSilence(it item) (voiceops.Silence, error) {
	r := reader{it: it}
	s := voiceops.Silence{
		ID: r.str(attrID), AccountID: r.str(attrAccountID), StartsAt: r.time(attrStartsAt), EndsAt: r.time(attrEndsAt),
		Comment: r.str(attrComment), CreatedAt: r.time(attrCreatedAt),
	}
	if r.err != nil {
		return s, r.err
	}
	var ms []matcherJSON
	if err := json.Unmarshal([]byte(r.str(attrMatchers)), &ms); err != nil {
		return s, fmt.Errorf("silence %s: matchers: %w", s.ID, err)
	}
	s.Matchers = make([]voiceops.SilenceMatcher, len(ms))
	for i, m := range ms {
		s.Matchers[i] = voiceops.SilenceMatcher(m)
	}
	return s, nil
}

func decodeSilences(op string, items []item, keep func(voiceops.Silence) bool) ([]voiceops.Silence, error) {
	out := make([]voiceops.Silence, 0, len(items))
	for _, it := range items {
		s, err := decodeSilence(it)
		if err != nil {
			return nil, wrap(op, err)
		}
		if keep(s) {
			out = append(out, s)
		}
	}
	voiceops.SortSilences(out)
	return out, nil
}

// CreateSilence reads the account's silences version (GetItem, with the
// caller's check alongside), then its silences not ended (Query), then
// writes the silence and the next version in one transaction, conditional
// on the version read. The version is read before the silences, never
// with them: a create that the Query missed has then bumped the version
// read, and the condition fails; read the other way round, the Query
// could miss a create whose bump the version shows, and a 101st silence
// pass the limit.
func (s *Config) CreateSilence(ctx context.Context, sil voiceops.Silence, now time.Time, check func() error) error {
	for attempt := range silenceAttempts {
		var checkErr error
		var wg sync.WaitGroup
		if attempt == 0 && check != nil {
			wg.Go(func() { checkErr = check() })
		}
		acct, found, err := s.get(ctx, "CreateSilence", accountKey(sil.AccountID))
		wg.Wait()
		if checkErr != nil {
			return checkErr
		}
		if err != nil {
			return err
		}
		if !found {
			return voiceops.ErrNotFound
		}
		version := (&reader{it: acct}).optNum(attrSilencesVersion)
		active, err := s.ActiveSilences(ctx, sil.AccountID, now)
		if err != nil {
			return err
		}
		if len(active) >= voiceops.MaxActiveSilences {
			return voiceops.ErrSilenceLimit
		}
		cond, values := "attribute_exists(#pk) AND attribute_not_exists(#sv)", item{":next": avN(1)}
		if version != nil {
			cond, values = "attribute_exists(#pk) AND #sv = :v", item{":v": avN(*version), ":next": avN(*version + 1)}
		}
		const bump, put = 0, 1
		o, err := s.transact(ctx, "CreateSilence", []types.TransactWriteItem{
			bump: {Update: &types.Update{
				TableName: &s.table, Key: accountKey(sil.AccountID),
				UpdateExpression: aws.String("SET #sv = :next"), ConditionExpression: aws.String(cond),
				ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sv": attrSilencesVersion},
				ExpressionAttributeValues: values,
			}},
			put: s.txPutNew(encodeSilence(sil)),
		})
		switch {
		case err != nil:
			return err
		case o.failed[put]:
			return voiceops.ErrAlreadyExists
		case o.failed[bump]:
			continue // another create (or the account's removal) came first: read again
		}
		return nil
	}
	return voiceops.ErrConflictingWrite
}

// ListSilences is one Query of the account's silences.
func (s *Config) ListSilences(ctx context.Context, accountID string, now time.Time) ([]voiceops.Silence, error) {
	items, err := s.queryPrefix(ctx, "ListSilences", pkAccount+accountID, skSilence)
	if err != nil {
		return nil, err
	}
	return decodeSilences("ListSilences", items, func(x voiceops.Silence) bool {
		return now.Before(x.EndsAt.Add(voiceops.SilenceRetention))
	})
}

// ActiveSilences is one Query of the key range of silences ending after
// `at`: the ended ones are not read.
func (s *Config) ActiveSilences(ctx context.Context, accountID string, at time.Time) ([]voiceops.Silence, error) {
	items, err := s.query(ctx, "ActiveSilences", &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :from AND :to"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#sk": attrSK},
		ExpressionAttributeValues: item{":pk": avS(pkAccount + accountID), ":from": avS(silenceSK(at.Add(time.Millisecond).Truncate(time.Millisecond), "")), ":to": avS(skSilence + "~")},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return decodeSilences("ActiveSilences", items, func(x voiceops.Silence) bool { return !x.Ended(at) })
}

// silenceByID is the silence of silences with that ID, or nil.
func silenceByID(silences []voiceops.Silence, id string) *voiceops.Silence {
	for i := range silences {
		if silences[i].ID == id {
			return &silences[i]
		}
	}
	return nil
}

// EndSilence finds the silence among the account's not ended (one Query;
// the ended ones, a second, only when it is not there) and, when the
// store writes wake-ups, reads the account's rules alongside (one more
// Query, in parallel), then removes it (a silence not started yet) or
// moves it to its new end with the wake-ups of the scopes it selects (a
// Delete, a Put and a Put per scope in one transaction).
func (s *Config) EndSilence(ctx context.Context, accountID, id string, at time.Time) (voiceops.Silence, error) {
	for range silenceAttempts {
		var (
			wg       sync.WaitGroup
			rules    []voiceops.AlertRule
			rulesErr error
		)
		if s.wakes() {
			wg.Go(func() { rules, rulesErr = s.ListRules(ctx, accountID) })
		}
		all, err := s.ActiveSilences(ctx, accountID, at)
		wg.Wait()
		if err != nil {
			return voiceops.Silence{}, err
		}
		if rulesErr != nil {
			return voiceops.Silence{}, rulesErr
		}
		cur := silenceByID(all, id)
		if cur == nil {
			// Not in effect or scheduled: an ended one (answered as it is)
			// or none. Only then is the account's history read, so that
			// ending a silence reads at most the 100 not ended, not the
			// retention's worth of ended ones.
			if all, err = s.ListSilences(ctx, accountID, at); err != nil {
				return voiceops.Silence{}, err
			}
			cur = silenceByID(all, id)
		}
		switch {
		case cur == nil:
			return voiceops.Silence{}, voiceops.ErrNotFound
		case cur.Ended(at):
			return *cur, nil
		}
		old := key(pkAccount+accountID, silenceSK(cur.EndsAt, id))
		del := types.TransactWriteItem{Delete: &types.Delete{
			TableName: &s.table, Key: old, ConditionExpression: aws.String(condExists), ExpressionAttributeNames: namePK,
		}}
		writes := []types.TransactWriteItem{del}
		ended := *cur
		if !at.Before(cur.StartsAt) {
			ended.EndsAt = at.UTC().Truncate(time.Millisecond)
			writes = append(writes, s.txPutNew(encodeSilence(ended)))
			for _, project := range ended.WakeScopes(rules) {
				writes = append(writes, s.txWake(accountID, project, at))
			}
		}
		o, err := s.transact(ctx, "EndSilence", writes)
		switch {
		case err != nil:
			return voiceops.Silence{}, err
		case !o.ok():
			continue // ended by another request meanwhile: read again
		case len(writes) == 1:
			return voiceops.Silence{}, nil // removed before it started
		}
		return ended, nil
	}
	return voiceops.Silence{}, voiceops.ErrConflictingWrite
}
