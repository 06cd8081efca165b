package dynamo_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkListPage30Dynamo times a list page of 30 conversations of 5
// turns, with their turns, through the lister on moto (at
// TEST_AWS_ENDPOINT): the page the capacity test counts, over a range from
// the epoch (the API's default).
//
//	go test ./shared/store/dynamo -run '^$' -bench ListPage30Dynamo -benchtime 20x
func BenchmarkListPage30Dynamo(b *testing.B) {
	if !awstest.Available(b) {
		b.Skip("needs moto at " + awstest.EndpointEnv)
	}
	c := awstest.DynamoDB(b)
	s := dynamo.NewConversations(c, awstest.Tables(b, c).Conversations)
	ctx := b.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	seedPage(b, s, now, 5, func(i int) int { return i % voiceops.ConversationShards })
	lister := convlist.Lister{Store: s}
	for b.Loop() {
		n := 0
		_, err := lister.Page(ctx, "acct_a", "proj_page", convlist.ListQuery{
			From: time.UnixMilli(0), To: now, Limit: 30, Match: func(voiceops.Conversation) bool { return true },
		}, func(_ voiceops.Conversation, turns []voiceops.Turn) bool {
			if len(turns) == 5 {
				n++
			}
			return true
		})
		if err != nil || n != 30 {
			b.Fatalf("page: %d with 5 turns, %v", n, err)
		}
	}
}

// BenchmarkListPageMotoTableSize times the stack's list page (10
// conversations of 2 turns, from the epoch) and a GetItem of a missing
// key (the stack's bare function) on moto, as the conversations table
// fills with other projects' items: the page's items are the same at
// every size. moto walks every item of a table for each Query (a
// DynamoDB Query reads only its partition) and spends about as long on
// each attribute value of an answer; its GetItem is a lookup. This is
// moto's cost, not the store's: docs/performance.md, "Latency per route
// through the stack".
//
//	go test ./shared/store/dynamo -run '^$' -bench ListPageMotoTableSize -benchtime 20x
func BenchmarkListPageMotoTableSize(b *testing.B) {
	if !awstest.Available(b) {
		b.Skip("needs moto at " + awstest.EndpointEnv)
	}
	c := awstest.DynamoDB(b)
	table := awstest.Tables(b, c).Conversations
	s := dynamo.NewConversations(c, table)
	ctx := b.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	seedPage(b, s, now, 2, func(int) int { return 0 })
	lister := convlist.Lister{Store: s}
	filled := 0
	for _, size := range []int{0, 1000, 4000} {
		// Other projects' turns, of the shape the chat writes.
		for ; filled < size; filled += 25 {
			var puts []types.WriteRequest
			for i := range 25 {
				puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
					"pk":                      &types.AttributeValueMemberS{Value: fmt.Sprintf("T#acct_b#proj_fill#conv_%06d", filled+i)},
					"sk":                      &types.AttributeValueMemberS{Value: "00000000"},
					"index":                   &types.AttributeValueMemberN{Value: "0"},
					"user_input":              &types.AttributeValueMemberS{Value: "balance"},
					"agent_response":          &types.AttributeValueMemberS{Value: "Your balance is 1,234.56 dollars. Anything else?"},
					"user_input_datetime":     &types.AttributeValueMemberS{Value: now.Format(time.RFC3339Nano)},
					"agent_response_datetime": &types.AttributeValueMemberS{Value: now.Format(time.RFC3339Nano)},
					"latency_ns":              &types.AttributeValueMemberN{Value: "8325"},
					"is_ood":                  &types.AttributeValueMemberBOOL{Value: false},
					"is_silence":              &types.AttributeValueMemberBOOL{Value: false},
				}}})
			}
			if _, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: puts}}); err != nil {
				b.Fatal(err)
			}
		}
		items := countItems(b, c, table)
		b.Run(fmt.Sprintf("table=%d/page", items), func(b *testing.B) {
			for b.Loop() {
				n := 0
				_, err := lister.Page(ctx, "acct_a", "proj_page", convlist.ListQuery{
					From: time.UnixMilli(0), To: now, Limit: 10, Match: func(voiceops.Conversation) bool { return true },
				}, func(_ voiceops.Conversation, turns []voiceops.Turn) bool {
					n += len(turns)
					return true
				})
				if err != nil || n != 20 {
					b.Fatalf("page: %d turns, %v", n, err)
				}
			}
		})
		b.Run(fmt.Sprintf("table=%d/getitem", items), func(b *testing.B) {
			for b.Loop() {
				if _, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: "BARE"}, "sk": &types.AttributeValueMemberS{Value: "BARE"}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// countItems counts a table's items.
func countItems(b *testing.B, c *dynamodb.Client, table string) int {
	n := 0
	in := &dynamodb.ScanInput{TableName: &table, Select: types.SelectCount}
	for {
		out, err := c.Scan(b.Context(), in)
		if err != nil {
			b.Fatal(err)
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// seedPage stores project proj_page's 30 conversations of the last hour,
// a second apart, each of the given number of turns, conversation i in
// shard(i).
func seedPage(b *testing.B, s *dynamo.Conversations, now time.Time, turns int, shard func(i int) int) {
	b.Helper()
	ctx := b.Context()
	base := now.Truncate(time.Hour).Add(-50 * time.Minute)
	for i := range 30 {
		cv := voiceops.Conversation{
			AccountID: "acct_a", ProjectID: "proj_page", Environment: voiceops.EnvLive, Channel: voiceops.ChannelWebchat,
			StartedAt: base.Add(time.Duration(i) * time.Second), InProgress: true, Version: 1, NumTurns: 1,
			ExpiresAt: now.Add(90 * 24 * time.Hour),
		}
		cv.ID = fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, cv.StartedAt.UnixMilli(), shard(i), voiceops.RandomBase62(20))
		if err := s.CreateConversation(ctx, cv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
			b.Fatal(err)
		}
		for j := 1; j < turns; j++ {
			nx := cv
			nx.Version, nx.NumTurns = int64(j+1), j+1
			if err := s.AddTurn(ctx, nx, voiceops.Turn{Index: j, UserInput: "my balance please", AgentResponse: "It is 42.", AgentResponseAt: now}, int64(j)); err != nil {
				b.Fatal(err)
			}
			cv = nx
		}
	}
}
