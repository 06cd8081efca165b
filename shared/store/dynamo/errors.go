package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// Cancellation reason codes of TransactWriteItems.
const (
	reasonConditionFailed = "ConditionalCheckFailed"
	reasonConflict        = "TransactionConflict"
)

// wrap returns an SDK error as a plain (so internal: 500) error. Its text
// only ever reaches the logs, never a response body.
func wrap(op string, err error) error {
	return fmt.Errorf("dynamo: %s: %w", op, err)
}

// outcome is how a transaction's items fared: failed[i] is true when the
// condition of item i failed, and old[i] is the item as it was when its
// ReturnValuesOnConditionCheckFailure asked for it (nil when it was missing).
type outcome struct {
	failed []bool
	old    []item
}

// ok reports whether every condition held (the transaction was written).
func (o outcome) ok() bool {
	for _, f := range o.failed {
		if f {
			return false
		}
	}
	return true
}

// missing reports whether item i failed its condition because it does not
// exist (it had asked for ALL_OLD and got nothing back).
func (o outcome) missing(i int) bool { return o.failed[i] && len(o.old[i]) == 0 }

// exists reports whether item i failed its condition although it exists.
func (o outcome) exists(i int) bool { return o.failed[i] && len(o.old[i]) > 0 }

// Retries of a transaction that DynamoDB cancelled only because another
// transaction held one of its items at the same time.
const (
	conflictAttempts = 8
	conflictBackoff  = 10 * time.Millisecond
	conflictMaxSleep = 300 * time.Millisecond
)

// transact writes items in one transaction. A cancellation for failed
// conditions is not an error: the outcome says which conditions failed. A
// cancellation only for conflicts with concurrent transactions is retried a
// few times with jittered backoff, then returned as ErrConflictingWrite.
// Every other failure is an internal error.
func (s *store) transact(ctx context.Context, op string, items []types.TransactWriteItem) (outcome, error) {
	in := &dynamodb.TransactWriteItemsInput{TransactItems: items}
	for attempt := 1; ; attempt++ {
		_, err := s.db.TransactWriteItems(ctx, in)
		if err == nil {
			return outcome{failed: make([]bool, len(items)), old: make([]item, len(items))}, nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) || len(tce.CancellationReasons) != len(items) {
			return outcome{}, wrap(op, err)
		}
		o := outcome{failed: make([]bool, len(items)), old: make([]item, len(items))}
		conditionFailed, conflict := false, false
		for i, r := range tce.CancellationReasons {
			switch aws.ToString(r.Code) {
			case reasonConditionFailed:
				o.failed[i], o.old[i] = true, r.Item
				conditionFailed = true
			case reasonConflict:
				conflict = true
			case "", "None":
			default:
				return outcome{}, wrap(op, err)
			}
		}
		switch {
		case conditionFailed && applied(items, o):
			return outcome{failed: make([]bool, len(items)), old: make([]item, len(items))}, nil
		case conditionFailed:
			return o, nil
		case !conflict:
			return outcome{}, wrap(op, err)
		case attempt == conflictAttempts:
			return outcome{}, voiceops.ErrConflictingWrite
		}
		if err := Backoff(ctx, attempt); err != nil {
			return outcome{}, wrap(op, err)
		}
	}
}

// applied reports whether the transaction was applied already, by an
// earlier attempt of this same call whose answer was lost: the SDK retries
// a write whose response broke off (aws-sdk-go-v2#1825), and the retry's
// conditions then fail on the call's own items. It was if every
// conditional Put failed on an item stored exactly as it would put it
// (ALL_OLD gives the stored item: no extra read). An item equal in every
// attribute, with its random ID, times and version, can only be this
// call's, and a transaction is all or nothing. Its other conditions (a
// counter now at its limit) failed for the same reason.
func applied(items []types.TransactWriteItem, o outcome) bool {
	puts := 0
	for i, ti := range items {
		if ti.Put == nil || ti.Put.ConditionExpression == nil {
			continue
		}
		puts++
		if !o.failed[i] || !sameItem(o.old[i], ti.Put.Item) {
			return false
		}
	}
	return puts > 0
}

// sameItem reports whether two items hold the same attributes and values.
func sameItem(a, b item) bool { return len(a) > 0 && reflect.DeepEqual(a, b) }

// Backoff waits before the next try of a call that DynamoDB turned down
// for contention (a transaction conflict, unprocessed batch items): a
// random pause that grows with attempt (from 1). It returns ctx's error if
// ctx ends first.
func Backoff(ctx context.Context, attempt int) error { return sleep(ctx, backoff(attempt)) }

// backoff returns a random delay that grows with the attempt number.
func backoff(attempt int) time.Duration {
	d := min(conflictBackoff<<(attempt-1), conflictMaxSleep)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// conditionFailed returns the ALL_OLD item of a failed single-item
// condition (nil when the item was missing) and whether err is one.
func conditionFailed(err error) (old item, ok bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

// notFound returns err, or ErrNotFound when there is none: the result of a
// read that found nothing.
func notFound(err error) error {
	if err != nil {
		return err
	}
	return voiceops.ErrNotFound
}
