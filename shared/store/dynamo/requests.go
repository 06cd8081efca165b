package dynamo

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The request guards of an API key live in the requests table
// (tables.Requests), under the key's own partition:
//
//	idempotency record  pk=<account>#<key ID>  sk=IDEM#<Idempotency-Key>
//	                    fp state token created_at lease_until; done: status_code ctype body request_id
//	                    expires_at (TTL) = created_at + 24 h
//	rate-limit bucket   pk=<account>#<key ID>  sk=RATE   tat (µs since the epoch)
//	                    expires_at (TTL) = an hour after the bucket is full again
//
// and the per-account override in the config table, beside the account:
//
//	override            pk=ACCT#<account>  sk=RATELIMIT  rate burst
//
// A request costs the limiter ONE conditional UpdateItem when the instance
// guesses the bucket's state right (in use, refused, or idle and full: the
// TAT it last saw for the bucket predicts which), and two when it guesses
// wrong or has not seen the bucket and finds it idle (the first condition
// fails, the second sets it).
const (
	skIdem      = "IDEM#"
	skRate      = "RATE"
	skRateLimit = "RATELIMIT"

	attrFP         = "fp"
	attrIdemState  = "state"
	attrToken      = "token"
	attrLeaseUntil = "lease_until"
	attrRespStatus = "status_code"
	attrRespType   = "ctype"
	attrRespBody   = "body"
	attrRespReqID  = "request_id"
	attrTAT        = "tat"
	attrRate       = "rate"
	attrBurst      = "burst"
)

// bucketIdle is how long a full bucket's item is kept (TTL) before DynamoDB
// deletes it; a missing item is a full bucket, so deletion changes nothing.
const bucketIdle = time.Hour

// Requests is the DynamoDB store of the request guards.
type Requests struct {
	store
	config store

	// lastTAT is, per bucket, the TAT this instance last saw: Take tries
	// first the write that TAT predicts (the idle bucket's when it has
	// passed), so a warm instance pays one UpdateItem whether its keys
	// are busy or come every few seconds. It orders the two conditional
	// writes and nothing else: a wrong guess costs the second write, as
	// before.
	mu      sync.Mutex
	lastTAT map[ratelimit.Bucket]int64
}

// maxHints bounds lastTAT; past it the map is emptied (a guess lost costs
// one write).
const maxHints = 10000

func (s *Requests) hint(b ratelimit.Bucket) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.lastTAT[b]
	return t, ok
}

func (s *Requests) remember(b ratelimit.Bucket, tat int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastTAT == nil || len(s.lastTAT) >= maxHints {
		s.lastTAT = map[ratelimit.Bucket]int64{}
	}
	s.lastTAT[b] = tat
}

// NewRequests returns the store on the requests table named table; the
// per-account overrides are read from the config table configTable.
func NewRequests(db DB, table, configTable string) *Requests {
	return &Requests{store: newStore(db, table), config: newStore(db, configTable)}
}

var (
	_ idempotency.Store = (*Requests)(nil)
	_ ratelimit.Store   = (*Requests)(nil)
)

func guardPK(accountID, keyID string) string { return accountID + "#" + keyID }

func idemKey(s idempotency.Scope) item { return key(guardPK(s.AccountID, s.KeyID), skIdem+s.Key) }

// Begin puts the claim unless a live record holds the scope: one
// conditional PutItem, whose failure returns the record that holds it.
func (s *Requests) Begin(ctx context.Context, rec idempotency.Record, now time.Time) (idempotency.Record, bool, error) {
	it := idemKey(rec.Scope)
	it[attrFP] = avS(rec.Fingerprint)
	it[attrIdemState] = avS(string(rec.State))
	it[attrToken] = avS(rec.Token)
	it[attrCreatedAt] = avN(rec.CreatedAt.UnixMilli())
	it[attrLeaseUntil] = avN(rec.LeaseUntil.UnixMilli())
	it[attrTTL] = avN(ttlSeconds(rec.CreatedAt.Add(idempotency.TTL)))
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           &s.table,
		Item:                it,
		ConditionExpression: aws.String("attribute_not_exists(#pk) OR #created <= :cutoff"),
		ExpressionAttributeNames: map[string]string{
			"#pk": attrPK, "#created": attrCreatedAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":cutoff": avN(now.Add(-idempotency.TTL).UnixMilli()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return rec, true, nil
	}
	old, ok := conditionFailed(err)
	if !ok {
		return idempotency.Record{}, false, wrap("Begin", err)
	}
	if sameItem(old, it) { // this claim (its token is random), applied by an earlier attempt: see applied
		return rec, true, nil
	}
	if len(old) == 0 {
		// An emulator that does not return the old item: read it.
		var found bool
		if old, found, err = s.get(ctx, "Begin", idemKey(rec.Scope)); err != nil {
			return idempotency.Record{}, false, err
		} else if !found {
			return idempotency.Record{}, false, wrap("Begin", voiceops.ErrConflictingWrite)
		}
	}
	got, err := readRecord(rec.Scope, old)
	return got, false, err
}

func readRecord(sc idempotency.Scope, it item) (idempotency.Record, error) {
	r := reader{it: it}
	rec := idempotency.Record{
		Scope:       sc,
		Fingerprint: r.str(attrFP),
		State:       idempotency.State(r.str(attrIdemState)),
		Token:       r.str(attrToken),
		CreatedAt:   time.UnixMilli(r.num(attrCreatedAt)).UTC(),
		LeaseUntil:  time.UnixMilli(r.num(attrLeaseUntil)).UTC(),
	}
	if rec.State == idempotency.Done {
		rec.Response.Status = int(r.num(attrRespStatus))
		if v, ok := it[attrRespType].(*types.AttributeValueMemberS); ok {
			rec.Response.ContentType = v.Value
		}
		if v, ok := it[attrRespReqID].(*types.AttributeValueMemberS); ok {
			rec.Response.RequestID = v.Value
		}
		if v, ok := it[attrRespBody].(*types.AttributeValueMemberB); ok {
			rec.Response.Body = v.Value
		}
	}
	return rec, r.err
}

// Finish stores the response on the claim of token, if it still holds.
func (s *Requests) Finish(ctx context.Context, sc idempotency.Scope, token string, resp idempotency.Response) error {
	values := map[string]types.AttributeValue{
		":token": avS(token), ":inflight": avS(string(idempotency.InFlight)), ":done": avS(string(idempotency.Done)),
		":status": avN(int64(resp.Status)), ":ctype": avS(resp.ContentType), ":rid": avS(resp.RequestID),
	}
	update := "SET #state = :done, #status = :status, #ctype = :ctype, #rid = :rid"
	names := map[string]string{"#state": attrIdemState, "#token": attrToken, "#status": attrRespStatus, "#ctype": attrRespType, "#rid": attrRespReqID}
	if len(resp.Body) > 0 {
		update += ", #body = :body"
		names["#body"] = attrRespBody
		values[":body"] = &types.AttributeValueMemberB{Value: resp.Body}
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 &s.table,
		Key:                       idemKey(sc),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#token = :token AND #state = :inflight"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if _, failed := conditionFailed(err); failed {
		return idempotency.ErrNotClaimed
	}
	if err != nil {
		return wrap("Finish", err)
	}
	return nil
}

func rateKey(b ratelimit.Bucket) item { return key(guardPK(b.AccountID, b.KeyID), skRate) }

// takeAttempts bounds the retries of Take when other requests of the same
// bucket change it between its two conditional writes.
const takeAttempts = 4

// Take applies GCRA with conditional updates: while the bucket is in use
// (TAT at or after now) it adds one interval under the condition that the
// result stays within the burst; when it is idle (TAT before now, or no
// item) it sets TAT to now plus one interval under that condition. Every
// Lambda instance thus shares each bucket exactly; the only inaccuracy is
// the instances' clock skew (NTP-synchronised, milliseconds).
func (s *Requests) Take(ctx context.Context, b ratelimit.Bucket, l ratelimit.Limit, now time.Time) (ratelimit.Decision, error) {
	n, iv := ratelimit.Micros(now), l.Interval()
	k := rateKey(b)
	expires := avN(ttlSeconds(now.Add(time.Duration(l.Window())*time.Microsecond + bucketIdle)))
	// in use: add one interval while the result stays within the burst.
	inUse := func() (ratelimit.Decision, bool, error) {
		out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                &s.table,
			Key:                      k,
			UpdateExpression:         aws.String("SET #tat = #tat + :iv, #ttl = :exp"),
			ConditionExpression:      aws.String("#tat BETWEEN :now AND :last"),
			ExpressionAttributeNames: map[string]string{"#tat": attrTAT, "#ttl": attrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":iv": avN(iv), ":now": avN(n), ":last": avN(n + l.Window() - iv), ":exp": expires,
			},
			ReturnValues:                        types.ReturnValueUpdatedNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			next, perr := numAttr(out.Attributes, attrTAT)
			if perr != nil {
				return ratelimit.Decision{}, true, wrap("Take", perr)
			}
			s.remember(b, next)
			return ratelimit.Allowed(next, n, l), true, nil
		}
		old, failed := conditionFailed(err)
		if !failed {
			return ratelimit.Decision{}, true, wrap("Take", err)
		}
		if len(old) > 0 {
			if tat, perr := numAttr(old, attrTAT); perr == nil && tat >= n {
				s.remember(b, tat)
				return ratelimit.Refused(tat, n, l), true, nil
			}
		}
		return ratelimit.Decision{}, false, nil // idle or new
	}
	// idle or new: the bucket is full; start it at now.
	idle := func() (ratelimit.Decision, bool, error) {
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                &s.table,
			Key:                      k,
			UpdateExpression:         aws.String("SET #tat = :next, #ttl = :exp"),
			ConditionExpression:      aws.String("attribute_not_exists(#tat) OR #tat < :now"),
			ExpressionAttributeNames: map[string]string{"#tat": attrTAT, "#ttl": attrTTL},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":next": avN(n + iv), ":now": avN(n), ":exp": expires,
			},
		})
		if err == nil {
			s.remember(b, n+iv)
			return ratelimit.Allowed(n+iv, n, l), true, nil
		}
		if _, failed := conditionFailed(err); !failed {
			return ratelimit.Decision{}, true, wrap("Take", err)
		}
		return ratelimit.Decision{}, false, nil // in use
	}
	first, second := inUse, idle
	if tat, ok := s.hint(b); ok && tat < n {
		first, second = idle, inUse
	}
	for range takeAttempts {
		if d, done, err := first(); done {
			return d, err
		}
		if d, done, err := second(); done {
			return d, err
		}
		// Another request changed the bucket between the two: try again.
	}
	return ratelimit.Decision{}, wrap("Take", voiceops.ErrConflictingWrite)
}

func numAttr(it item, name string) (int64, error) {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, errAttr(name)
	}
	return strconv.ParseInt(v.Value, 10, 64)
}

type errAttr string

func (e errAttr) Error() string { return "attribute " + string(e) + " is missing or not a number" }

func overrideKey(accountID string) item { return key(pkAccount+accountID, skRateLimit) }

func (s *Requests) AccountLimit(ctx context.Context, accountID string) (ratelimit.Limit, error) {
	it, found, err := s.config.get(ctx, "AccountLimit", overrideKey(accountID))
	if err != nil {
		return ratelimit.Limit{}, err
	}
	if !found {
		return ratelimit.Limit{}, voiceops.ErrNotFound
	}
	r := reader{it: it}
	l := ratelimit.Limit{Rate: int(r.num(attrRate)), Burst: int(r.num(attrBurst))}
	return l, r.err
}

func (s *Requests) SetAccountLimit(ctx context.Context, accountID string, l *ratelimit.Limit) error {
	if l == nil {
		if _, err := s.config.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.config.table, Key: overrideKey(accountID)}); err != nil {
			return wrap("SetAccountLimit", err)
		}
		return nil
	}
	it := overrideKey(accountID)
	it[attrRate] = avN(int64(l.Rate))
	it[attrBurst] = avN(int64(l.Burst))
	if _, err := s.config.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.config.table, Item: it}); err != nil {
		return wrap("SetAccountLimit", err)
	}
	return nil
}
