package dynamo_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestHourIndexOldLayout checks the hour index's move to one partition per
// project (hourindex.go): conversations indexed by the release before (one
// partition per shard) are still listed, the project's legacy marker is
// written only once this release has been writing the project for a while,
// and then a listing reads the old partitions only for the hours that have
// old entries.
func TestHourIndexOldLayout(t *testing.T) {
	c := client(t)
	table := conversationTables(t, c).Conversations
	ctx := t.Context()
	now := time.Now().UTC()
	hour := func(back int) time.Time {
		return now.Truncate(time.Hour).Add(-time.Duration(back)*time.Hour + 10*time.Minute)
	}
	writer := dynamo.NewConversations(c, table)
	create := func(started time.Time, shard int) voiceops.Conversation {
		t.Helper()
		cv := testConversation(started)
		cv.ID = fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, started.UnixMilli(), shard, voiceops.RandomBase62(20))
		if err := writer.CreateConversation(ctx, cv, nil); err != nil {
			t.Fatal(err)
		}
		return cv
	}
	// As the release before wrote them: the entry in the shard's own
	// partition, none in the project's.
	asOld := func(cv voiceops.Conversation, ttl int64) {
		t.Helper()
		_, shard, _ := voiceops.ParseConversationID(cv.ID)
		h := cv.StartedAt.UTC().Format("2006010215")
		if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &table, Key: map[string]types.AttributeValue{
			tables.PK: &types.AttributeValueMemberS{Value: "H#acct_a#proj_a"},
			tables.SK: &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", h, shard)},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
			tables.PK:  &types.AttributeValueMemberS{Value: fmt.Sprintf("H#acct_a#proj_a#%d", shard)},
			tables.SK:  &types.AttributeValueMemberS{Value: h},
			tables.TTL: &types.AttributeValueMemberN{Value: strconv.FormatInt(ttl, 10)},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	ttl := now.Add(400 * 24 * time.Hour).Unix()
	oldA, oldB := create(hour(8), 1), create(hour(7), 2)
	asOld(oldA, ttl)
	asOld(oldB, ttl+60)
	recent := create(hour(1), 0)
	marker := func() map[string]types.AttributeValue {
		t.Helper()
		out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
			tables.PK: &types.AttributeValueMemberS{Value: "H#acct_a#proj_a"}, tables.SK: &types.AttributeValueMemberS{Value: "~"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	list := func(s *dynamo.Conversations, from time.Time, want ...voiceops.Conversation) {
		t.Helper()
		got, err := s.ListConversations(ctx, "acct_a", "proj_a", from, now, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids, wantIDs []string
		for _, cv := range got {
			ids = append(ids, cv.ID)
		}
		for _, cv := range want {
			wantIDs = append(wantIDs, cv.ID)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Errorf("ListConversations from %s: %v, want %v", from.Format(time.RFC3339), ids, wantIDs)
		}
	}

	// This release has written the project only in the last hour: a
	// process of the release before may still be writing old entries, so
	// the listing reads them all and writes no marker.
	db := &countingDB{DB: c}
	unsettled := dynamo.NewConversations(db, table)
	list(unsettled, time.UnixMilli(0), oldA, oldB, recent)
	if m := marker(); m != nil {
		t.Errorf("legacy marker written before the index settled: %v", m)
	}
	if got, want := db.take(), map[string]int{"GetItem": 1, "Query": 1 + voiceops.ConversationShards + 3}; !maps.Equal(got, want) {
		t.Errorf("unsettled listing: calls %v, want %v", got, want)
	}
	// The same process within a minute: what the old entries said is kept,
	// so no marker read and no full read of them, only their range.
	list(unsettled, time.UnixMilli(0), oldA, oldB, recent)
	if got, want := db.take(), map[string]int{"Query": 1 + voiceops.ConversationShards + 3}; !maps.Equal(got, want) {
		t.Errorf("unsettled listing again: calls %v, want %v", got, want)
	}

	// Four hours back, this release wrote one: settled. The marker names
	// the newest old hour and expires with the last old entry.
	settledBy := create(hour(4), 0)
	list(dynamo.NewConversations(db, table), time.UnixMilli(0), oldA, oldB, settledBy, recent)
	m := marker()
	if v, _ := m["legacy"].(*types.AttributeValueMemberS); v == nil || v.Value != oldB.StartedAt.UTC().Format("2006010215") {
		t.Errorf("legacy marker %v, want legacy %s", m, oldB.StartedAt.UTC().Format("2006010215"))
	}
	if v, _ := m[tables.TTL].(*types.AttributeValueMemberN); v == nil || v.Value != strconv.FormatInt(ttl+60, 10) {
		t.Errorf("legacy marker %v, want TTL %d (the last old entry's)", m, ttl+60)
	}
	db.take()

	// Another process: the marker, the index, and the old partitions over
	// the old hours only.
	other := dynamo.NewConversations(db, table)
	list(other, time.UnixMilli(0), oldA, oldB, settledBy, recent)
	if got, want := db.take(), map[string]int{"GetItem": 1, "Query": 1 + voiceops.ConversationShards + 4}; !maps.Equal(got, want) {
		t.Errorf("listing over old hours: calls %v, want %v", got, want)
	}
	// A range after the old hours: the index alone (the marker is kept).
	list(other, hour(5), settledBy, recent)
	if got, want := db.take(), map[string]int{"Query": 1 + 2}; !maps.Equal(got, want) {
		t.Errorf("listing after the old hours: calls %v, want %v", got, want)
	}
}

// TestHourIndexOldLayoutExpired checks that old entries past their TTL
// (which DynamoDB deletes within days) count for nothing: the marker says
// there are none, so listings never read the old partitions again.
func TestHourIndexOldLayoutExpired(t *testing.T) {
	c := client(t)
	table := conversationTables(t, c).Conversations
	ctx := t.Context()
	now := time.Now().UTC()
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]types.AttributeValue{
		tables.PK:  &types.AttributeValueMemberS{Value: "H#acct_a#proj_a#3"},
		tables.SK:  &types.AttributeValueMemberS{Value: now.Add(-500 * 24 * time.Hour).Format("2006010215")},
		tables.TTL: &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)},
	}}); err != nil {
		t.Fatal(err)
	}
	cv := testConversation(now.Add(-5 * time.Hour))
	db := &countingDB{DB: c}
	s := dynamo.NewConversations(db, table)
	if err := s.CreateConversation(ctx, cv, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, err := s.ListConversations(ctx, "acct_a", "proj_a", time.UnixMilli(0), now, "", 10); err != nil || len(got) != 1 {
			t.Fatalf("ListConversations: %d, %v", len(got), err)
		}
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
		tables.PK: &types.AttributeValueMemberS{Value: "H#acct_a#proj_a"}, tables.SK: &types.AttributeValueMemberS{Value: "~"},
	}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Item == nil || out.Item["legacy"] != nil || out.Item[tables.TTL] != nil {
		t.Errorf("legacy marker %v, want one saying none, kept for good", out.Item)
	}
	_, shard, _ := voiceops.ParseConversationID(cv.ID)
	db.take()
	if _, err := s.ListConversations(ctx, "acct_a", "proj_a", time.UnixMilli(0), now, "", 10); err != nil {
		t.Fatal(err)
	}
	if got, want := db.take(), map[string]int{"Query": 2}; !maps.Equal(got, want) {
		t.Errorf("listing with no old entries: calls %v, want %v (index, shard %d)", got, want, shard)
	}
}
