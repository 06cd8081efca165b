package dynamo_test

import (
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// TestDueReadsTheOpenIndex: a conversation in progress written before the
// idle index existed carries only the open index's keys; the sweep still
// finds it, once, and after its next write (which moves it to the idle
// index) still once.
func TestDueReadsTheOpenIndex(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConversations(c, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := testConversation(now.Add(-time.Hour))
	conv.IdleDue = now.Add(-time.Minute)
	if err := s.CreateConversation(ctx, conv, nil); err != nil {
		t.Fatal(err)
	}
	// Rewrite it as the previous layout did: open keys, no idle keys.
	var raw map[string]types.AttributeValue
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(names.Conversations)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if id, _ := it["id"].(*types.AttributeValueMemberS); id != nil && id.Value == conv.ID {
			if _, ok := it[tables.IdleGSI.PartitionKey]; ok {
				raw = it
			}
		}
	}
	if raw == nil {
		t.Fatal("no conversation item with idle index keys")
	}
	delete(raw, tables.IdleGSI.PartitionKey)
	delete(raw, tables.IdleGSI.SortKey)
	h := fnv.New32a()
	_, _ = h.Write([]byte(conv.ID))
	due := raw["idle_due"].(*types.AttributeValueMemberS).Value
	raw[tables.OpenGSI.PartitionKey] = &types.AttributeValueMemberS{Value: fmt.Sprintf("O#%d", h.Sum32()%16)}
	raw[tables.OpenGSI.SortKey] = &types.AttributeValueMemberS{Value: due + "#" + conv.ID}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(names.Conversations), Item: raw}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		got, err := s.DueConversations(ctx, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != conv.ID || !got[0].IdleDue.Equal(conv.IdleDue) || got[0].AccountID != conv.AccountID {
			t.Errorf("%s: due %+v, want %s once", when, got, conv.ID)
		}
		if got, _ := s.DueConversations(ctx, conv.IdleDue.Add(-time.Millisecond), 10); len(got) != 0 {
			t.Errorf("%s: due a millisecond before its due: %d", when, len(got))
		}
	}
	check("old layout")
	next := withVersion(conv, 2)
	next.NumTurns = 3
	if err := s.UpdateConversation(ctx, next, 1); err != nil {
		t.Fatal(err)
	}
	check("after a write")
}
