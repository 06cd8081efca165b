package dynamo_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/convlist"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestPageTurnsOfItemsBeforeTheIndex: turns written before the turns index
// existed (no index keys) are still on the page, read by the
// per-conversation fallback, next to conversations read by runs.
func TestPageTurnsOfItemsBeforeTheIndex(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConversations(c, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	base := now.Truncate(time.Hour).Add(-50 * time.Minute)
	var ids []string
	for i := range 4 {
		cv := testConversation(base.Add(time.Duration(i) * time.Second))
		first := voiceops.Turn{Index: 0, AgentResponse: fmt.Sprintf("hello %d", i), AgentResponseAt: now}
		if err := s.CreateConversation(ctx, cv, &first); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cv.ID)
	}
	// The second conversation's marker and turn as an older release wrote them.
	for _, sk := range []string{"C", "00000000"} {
		if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(names.Conversations),
			Key: map[string]types.AttributeValue{
				tables.PK: &types.AttributeValueMemberS{Value: "T#acct_a#proj_a#" + ids[1]},
				tables.SK: &types.AttributeValueMemberS{Value: sk},
			},
			UpdateExpression:         aws.String("REMOVE #p, #s"),
			ExpressionAttributeNames: map[string]string{"#p": tables.TurnsGSI.PartitionKey, "#s": tables.TurnsGSI.SortKey},
		}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.TurnsBetween(ctx, "acct_a", "proj_a", ids[0], ids[3])
	if err != nil || len(runs) != 3 {
		t.Fatalf("TurnsBetween: %d conversations, %v; want 3 (the older one is not in the index)", len(runs), err)
	}
	got := 0
	_, err = convlist.Lister{Store: s}.Page(ctx, "acct_a", "proj_a", convlist.ListQuery{
		From: base.Add(-time.Minute), To: now, Limit: 10, Match: func(voiceops.Conversation) bool { return true },
	}, func(cv voiceops.Conversation, turns []voiceops.Turn) bool {
		if want := fmt.Sprintf("hello %d", got); len(turns) != 1 || turns[0].AgentResponse != want || cv.ID != ids[got] {
			t.Errorf("page[%d] = %s with %+v, want %s with %q", got, cv.ID, turns, ids[got], want)
		}
		got++
		return true
	})
	if err != nil || got != 4 {
		t.Fatalf("page: %d conversations, %v", got, err)
	}
}
