package dynamo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Turn writes cost what the turn changes. AddTurn is no
// transaction (which doubles the units of every item in it) but two
// conditional writes in an order that keeps a transaction's guarantees:
//
//  1. PutItem of the turn, conditional on its index being free. The item
//     carries the version it builds on ("base") and when it was written.
//  2. UpdateItem of the conversation, conditional on its version (and on
//     it being live), setting its attributes and "turns_to", one past the
//     highest committed turn index. This write commits the turn.
//
// Readers show only the turns below turns_to (Turns, PageTurns), so a turn
// whose commit failed or never came (a lost race, a crash between the
// writes) is never seen; a writer whose commit is refused deletes its turn
// again (best effort). A later writer finding such an uncommitted turn
// at its index overwrites it when it was built on an older version (its
// commit can no longer succeed); one built on the same version is a
// concurrent writer's (ErrConflictingWrite), unless it is older than
// orphanAge: then its writer crashed, and the conversation's version is
// bumped (a fence: that writer's commit can no longer succeed either) and
// the caller answered ErrConflictingWrite, to read and retry. Two
// concurrent turns on one conversation still cannot both succeed: they
// race for the turn's index, then for the version.
//
// State and integration attributes (up to 64 KiB each) are kept out of
// the conversation item when large (sideInline): in a side item next to
// it, keyed by a hash of its content (sk=<id>#S<hash>), written only when
// that content is not known to be stored already. So a turn that leaves
// them alone writes a conversation item of about 600 bytes, whatever their
// size; readers get the side item with the conversation (a list Query
// reads it next to the conversation; GetConversation reads it with a
// second GetItem). A side item no longer named by its conversation stays
// until the conversation's TTL.
const (
	attrTurnsTo = "turns_to" // one past the highest committed turn index
	attrSide    = "side"     // hash of the side item's content
	attrBase    = "base"     // a turn's: the conversation version it builds on
	attrWritten = "written"  // a turn's: when it was written, sortableTime

	skSideInfix = "#S"
	// sideInline is the size of state and attributes (JSON) above which
	// they go to a side item.
	sideInline = 512
	// orphanAge is how long after its write an uncommitted turn built on
	// the current version is taken for a crashed writer's: longer than any
	// function's timeout.
	orphanAge = 2 * time.Minute
)

// conversationAttrs are the conversation item's attributes other than its
// keys that an update may remove (absent from the new item), and the
// open index's keys, which nothing writes any more.
var conversationAttrs = []string{
	attrEnv, attrChannel, attrVariantID, attrVariantName, attrFromNumber, attrToNumber,
	attrASRLang, attrTTSLang, attrIntegrationAttrs, attrState, attrEndedAt, attrEndReason,
	attrHandoffReason, attrHandoffDestination, attrSharedID, attrCustomMetrics,
	attrTTL, attrExpires, attrIdleDue, attrSide,
	tables.IdleGSI.PartitionKey, tables.IdleGSI.SortKey, tables.OpenGSI.PartitionKey, tables.OpenGSI.SortKey,
}

// splitSide moves conv's state and integration attributes to a side item
// when they are larger than sideInline; side is nil when they stay.
func splitSide(conv item) (side item) {
	n := 0
	for _, a := range []string{attrState, attrIntegrationAttrs} {
		if v, ok := conv[a].(*types.AttributeValueMemberS); ok {
			n += len(v.Value)
		}
	}
	if n <= sideInline {
		return nil
	}
	h := sha256.New()
	// The expiry is part of the content: a conversation whose retention
	// changes gets a side item that lives as long.
	for _, a := range []string{attrState, attrIntegrationAttrs, attrExpires} {
		v, _ := conv[a].(*types.AttributeValueMemberS)
		if v != nil {
			fmt.Fprintf(h, "%s:%d:%s;", a, len(v.Value), v.Value)
		}
	}
	sum := hex.EncodeToString(h.Sum(nil))[:32]
	side = item{attrPK: conv[attrPK], attrSK: avS(idOf(conv) + skSideInfix + sum), attrID: conv[attrID]}
	for _, a := range []string{attrState, attrIntegrationAttrs, attrTTL, attrExpires} {
		if v, ok := conv[a]; ok {
			side[a] = v
		}
	}
	delete(conv, attrState)
	delete(conv, attrIntegrationAttrs)
	conv[attrSide] = avS(sum)
	return side
}

// isSideItem reports whether it is a conversation's side item (its sort
// key is not the bare conversation ID).
func isSideItem(it item) bool {
	sk, _ := it[attrSK].(*types.AttributeValueMemberS)
	return sk != nil && strings.Contains(sk.Value, skSideInfix)
}

// sideKeyOf is the key of the side item conv names; ok is false when it
// names none.
func sideKeyOf(conv item) (item, bool) {
	h, _ := conv[attrSide].(*types.AttributeValueMemberS)
	if h == nil {
		return nil, false
	}
	return item{attrPK: conv[attrPK], attrSK: avS(idOf(conv) + skSideInfix + h.Value)}, true
}

// withSide returns conv with the state and attributes of its side item.
func withSide(conv, side item) item {
	out := maps.Clone(conv)
	for _, a := range []string{attrState, attrIntegrationAttrs} {
		if v, ok := side[a]; ok {
			out[a] = v
		}
	}
	return out
}

// readSide returns conv with its side item's content, read with a GetItem
// when conv names one.
func (s *Conversations) readSide(ctx context.Context, op string, conv item, consistent bool) (item, error) {
	k, ok := sideKeyOf(conv)
	if !ok {
		return conv, nil
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return nil, wrap(op, err)
	}
	if len(out.Item) == 0 {
		return nil, wrap(op, fmt.Errorf("conversation %s: its state item is missing", idOf(conv)))
	}
	s.sides.add(sideCacheKey(k))
	return withSide(conv, out.Item), nil
}

func sideCacheKey(k item) string {
	pk, _ := k[attrPK].(*types.AttributeValueMemberS)
	sk, _ := k[attrSK].(*types.AttributeValueMemberS)
	return pk.Value + "/" + sk.Value
}

// putSide writes a side item unless this store has written or read it
// (then it is stored: its key is its content).
func (s *Conversations) putSide(ctx context.Context, op string, side item) error {
	if side == nil {
		return nil
	}
	ck := sideCacheKey(side)
	if s.sides.has(ck) {
		return nil
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.table, Item: side}); err != nil {
		return wrap(op, err)
	}
	s.sides.add(ck)
	return nil
}

// commit writes the conversation as conv, conditional on the stored
// version being expect and the conversation live. With turn >= 0 it also
// sets turns_to past turn (the turn's commit), conditional on turns_to not
// being past it already. It is a PutItem of the whole (small: state and
// attributes live in the side item when large) conversation item when its
// turns_to is known (a turn's; else the one this store read at version
// expect), else an UpdateItem of its attributes, leaving turns_to alone.
// Both cost the item's size.
func (s *Conversations) commit(ctx context.Context, op string, conv item, expect int64, turn int) error {
	names, values := s.liveVersionValues(expect)
	cond := condLiveVersion
	turnsTo, known := int64(turn)+1, turn >= 0
	if seen, ok := s.listed.get(idOf(conv), expect); !known && ok && seen.turnsTo >= 0 {
		turnsTo, known = seen.turnsTo, true
	}
	if turn >= 0 {
		names["#tt"] = attrTurnsTo
		values[":turn"] = avN(int64(turn))
		cond += " AND (attribute_not_exists(#tt) OR #tt <= :turn)"
	}
	var err error
	if known {
		conv[attrTurnsTo] = avN(turnsTo)
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.table, Item: conv, ConditionExpression: &cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	} else {
		var set, remove []string
		attrs := slices.Sorted(maps.Keys(conv))
		for i, a := range attrs {
			if a == attrPK || a == attrSK {
				continue
			}
			n, v := "#s"+strconv.Itoa(i), ":s"+strconv.Itoa(i)
			names[n], values[v] = a, conv[a]
			set = append(set, n+" = "+v)
		}
		for i, a := range conversationAttrs {
			if _, ok := conv[a]; !ok {
				n := "#r" + strconv.Itoa(i)
				names[n] = a
				remove = append(remove, n)
			}
		}
		expr := "SET " + strings.Join(set, ", ")
		if len(remove) > 0 {
			expr += " REMOVE " + strings.Join(remove, ", ")
		}
		_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: &s.table, Key: item{attrPK: conv[attrPK], attrSK: conv[attrSK]},
			UpdateExpression: &expr, ConditionExpression: &cond,
			ExpressionAttributeNames: names, ExpressionAttributeValues: values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
	}
	old, failed := conditionFailed(err)
	switch {
	case !failed && err != nil:
		return wrap(op, err)
	case !failed:
		s.listed.put(idOf(conv), expect+1, seenOf(conv))
		return nil
	case committed(old, conv, turn):
		return nil // an earlier try of this call was applied (see applied)
	case len(old) > 0 && !expiredAt(old, s.now()) && numOf(old, attrVersion) == expect:
		return voiceops.ErrAlreadyExists // turns_to is past turn
	}
	return s.staleOrGone(old)
}

// committed reports whether old is conv as commit writes it.
func committed(old, conv item, turn int) bool {
	if len(old) == 0 {
		return false
	}
	for a, v := range conv {
		if !sameItem(item{a: old[a]}, item{a: v}) {
			return false
		}
	}
	for _, a := range conversationAttrs {
		if _, ok := conv[a]; !ok {
			if _, ok := old[a]; ok {
				return false
			}
		}
	}
	return turn < 0 || numOf(old, attrTurnsTo) == int64(turn)+1
}

// numOf is the number under name, -1 when absent or not a number.
func numOf(it item, name string) int64 {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// putTurn is step 1 of AddTurn: the turn's PutItem, conditional on its
// index being free; an uncommitted turn in its place is resolved as the
// comment at the top of this file says.
func (s *Conversations) putTurn(ctx context.Context, k, turn item, index int, expect int64) error {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.table, Item: turn, ConditionExpression: aws.String(condNew), ExpressionAttributeNames: namePK,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	old, failed := conditionFailed(err)
	if !failed {
		if err != nil {
			return wrap("AddTurn", err)
		}
		return nil
	}
	if sameTurn(old, turn) {
		return nil // an earlier try of this call
	}
	base := numOf(old, attrBase)
	if base < 0 {
		return voiceops.ErrAlreadyExists // written by the transactional layout: committed
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return wrap("AddTurn", err)
	}
	cur := out.Item
	switch {
	case len(cur) == 0 || expiredAt(cur, s.now()):
		return voiceops.ErrNotFound
	case numOf(cur, attrVersion) != expect:
		return voiceops.ErrConflictingWrite
	case int64(index) < numOf(cur, attrTurnsTo):
		return voiceops.ErrAlreadyExists
	case base < expect:
		// Built on an older version: its commit can never succeed.
		written, _ := old[attrWritten].(*types.AttributeValueMemberS)
		if written == nil {
			return voiceops.ErrConflictingWrite
		}
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: &s.table, Item: turn,
			ConditionExpression:       aws.String("#base = :base AND #written = :written"),
			ExpressionAttributeNames:  map[string]string{"#base": attrBase, "#written": attrWritten},
			ExpressionAttributeValues: item{":base": avN(base), ":written": written},
		})
		if _, failed := conditionFailed(err); failed {
			return voiceops.ErrConflictingWrite
		}
		if err != nil {
			return wrap("AddTurn", err)
		}
		return nil
	}
	// Built on the same version: a concurrent writer's, or a crashed one's.
	written, _ := old[attrWritten].(*types.AttributeValueMemberS)
	if written != nil {
		if at, err := time.Parse(time.RFC3339Nano, written.Value); err == nil && s.now().Sub(at) > orphanAge {
			s.fence(ctx, k, expect)
		}
	}
	return voiceops.ErrConflictingWrite
}

// fence moves the conversation's version past expect, so that a crashed
// writer's turn built on it can never be committed. Best effort: a failed
// fence leaves the conversation as it was.
func (s *Conversations) fence(ctx context.Context, k item, expect int64) {
	_, _ = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: k,
		UpdateExpression:          aws.String("SET #version = :next"),
		ConditionExpression:       aws.String("#version = :expect"),
		ExpressionAttributeNames:  map[string]string{"#version": attrVersion},
		ExpressionAttributeValues: item{":next": avN(expect + 1), ":expect": avN(expect)},
	})
}

// sameTurn reports whether old is turn as written by an earlier try of
// the same call (all but the time of writing).
func sameTurn(old, turn item) bool {
	a, b := maps.Clone(old), maps.Clone(turn)
	delete(a, attrWritten)
	delete(b, attrWritten)
	return sameItem(a, b)
}
