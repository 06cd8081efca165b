package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// txSizesDB counts calls and records how many items each transaction
// writes.
type txSizesDB struct {
	*countingDB
	mu    sync.Mutex
	sizes []int
}

func (d *txSizesDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	d.mu.Lock()
	d.sizes = append(d.sizes, len(in.TransactItems))
	d.mu.Unlock()
	return d.countingDB.TransactWriteItems(ctx, in, o...)
}

func (d *txSizesDB) takeSizes() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.sizes
	d.sizes = nil
	return out
}

// TestSharedIDCallBudget checks what the shared ID's item costs: the turn
// that hands off writes it first (one more PutItem; no transaction); a
// later update writes it again only when the store does not know the
// stored version carries it (another process's store, or a changed
// expiry); the lookup is two GetItems.
func TestSharedIDCallBudget(t *testing.T) {
	c := client(t)
	db := &txSizesDB{countingDB: &countingDB{DB: c}}
	table := conversationTables(t, c).Conversations
	s := dynamo.NewConversations(db, table)
	other := dynamo.NewConversations(db, table) // another process's
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := testConversation(now)
	if err := s.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0}); err != nil {
		t.Fatal(err)
	}
	handedOff := withVersion(conv, 2)
	handedOff.Handoff, handedOff.HandoffDestination, handedOff.SharedID = true, "support-queue", "shr_"+voiceops.RandomBase62(20)
	handedOff.InProgress, handedOff.EndedAt, handedOff.EndReason = false, &now, voiceops.EndHandoff
	bridged := withVersion(handedOff, 3)
	bridged.State = map[string]any{"bridged": true}

	steps := []struct {
		name  string
		call  func() error
		want  map[string]int
		sizes []int
	}{
		{"AddTurn without a shared ID", func() error { return s.AddTurn(ctx, withVersion(conv, 2), voiceops.Turn{Index: 1}, 1) },
			map[string]int{"PutItem": 2}, nil},
		// The shared ID's item first, then the turn and the conversation.
		{"AddTurn handing off", func() error {
			handedOff.Version, handedOff.NumTurns = 3, 3
			return s.AddTurn(ctx, handedOff, voiceops.Turn{Index: 2}, 2)
		}, map[string]int{"PutItem": 3}, nil},
		// This store wrote version 3 with the shared ID: the commit alone.
		{"UpdateConversation of a handed-off conversation", func() error {
			bridged.Version = 4
			return s.UpdateConversation(ctx, bridged, 3)
		}, map[string]int{"PutItem": 1}, nil},
		{"UpdateConversation at a stale version", func() error {
			stale := bridged // another change from version 3 (the very same one would be a retry of the last call)
			stale.NumSilences++
			if err := s.UpdateConversation(ctx, stale, 3); !errors.Is(err, voiceops.ErrConflictingWrite) {
				return fmt.Errorf("want ErrConflictingWrite, got %v", err)
			}
			return nil
		}, map[string]int{"PutItem": 1}, nil},
		// A store that has not seen version 4 writes the item first (and
		// commits with an UpdateItem: it does not know turns_to either).
		{"UpdateConversation by another store", func() error {
			return other.UpdateConversation(ctx, withState(bridged, 5, "by", "other"), 4)
		}, map[string]int{"PutItem": 1, "UpdateItem": 1}, nil},
		// Once it has read the version it writes on: the commit alone.
		{"UpdateConversation after a read", func() error {
			got, err := other.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
			if err != nil || got.Version != 5 {
				return fmt.Errorf("read version %d: %v", got.Version, err)
			}
			return other.UpdateConversation(ctx, withState(bridged, 6, "by", "reader"), 5)
		}, map[string]int{"GetItem": 1, "PutItem": 1}, nil},
		// A changed expiry is a changed item: written again.
		{"UpdateConversation changing the expiry", func() error {
			longer := withState(bridged, 7, "by", "reader")
			longer.ExpiresAt = longer.ExpiresAt.Add(time.Hour)
			if err := other.UpdateConversation(ctx, longer, 6); err != nil {
				return err
			}
			return sharedItemExpires(ctx, c, table, handedOff.SharedID, longer.ExpiresAt)
		}, map[string]int{"PutItem": 2}, nil},
		{"ConversationBySharedID", func() error {
			got, err := s.ConversationBySharedID(ctx, conv.AccountID, conv.ProjectID, handedOff.SharedID)
			if err == nil && (got.ID != conv.ID || got.State["bridged"] != true || got.State["by"] != "reader") {
				err = fmt.Errorf("got %+v", got)
			}
			return err
		}, map[string]int{"GetItem": 2}, nil},
		{"ConversationBySharedID of an unknown ID", func() error {
			if _, err := s.ConversationBySharedID(ctx, conv.AccountID, conv.ProjectID, "shr_unknown"); !errors.Is(err, voiceops.ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
			return nil
		}, map[string]int{"GetItem": 1}, nil},
		{"ConversationBySharedID of an empty ID", func() error {
			if _, err := s.ConversationBySharedID(ctx, conv.AccountID, conv.ProjectID, ""); !errors.Is(err, voiceops.ErrNotFound) {
				return fmt.Errorf("want ErrNotFound, got %v", err)
			}
			return nil
		}, map[string]int{}, nil},
	}
	for _, st := range steps {
		db.take()
		db.takeSizes()
		if err := st.call(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := db.take(); !maps.Equal(got, st.want) && !(len(got) == 0 && len(st.want) == 0) {
			t.Errorf("%s: calls %v, want %v", st.name, got, st.want)
		}
		if got := db.takeSizes(); !slices.Equal(got, st.sizes) {
			t.Errorf("%s: transactions of %v items, want %v", st.name, got, st.sizes)
		}
	}
}

// withState is c at version with state[k] = v added.
func withState(c voiceops.Conversation, version int64, k string, v any) voiceops.Conversation {
	c.Version = version
	c.State = maps.Clone(c.State)
	c.State[k] = v
	return c
}

// sharedItemExpires fails unless the shared ID's item says it expires at
// exp (read raw: the store has no read of it alone).
func sharedItemExpires(ctx context.Context, c *dynamodb.Client, table, sharedID string, exp time.Time) error {
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "S#acct_a#proj_a#" + sharedID}, "sk": &types.AttributeValueMemberS{Value: "S"}}})
	if err != nil {
		return err
	}
	got, _ := out.Item["expires"].(*types.AttributeValueMemberS)
	if got == nil {
		return fmt.Errorf("shared ID item %v has no expires", out.Item)
	}
	if at, err := time.Parse(time.RFC3339Nano, got.Value); err != nil || !at.Equal(exp) {
		return fmt.Errorf("shared ID item expires %s, want %s", got.Value, exp.Format(time.RFC3339Nano))
	}
	return nil
}
