package dynamo_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/conversations/convlist"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestPageTurnsOfOlderLayouts: a page mixes conversations of three
// layouts, and each one's turns are on it: the current one (turns_to on
// the conversation: PageTurns by key), the one before (no turns_to, turns
// in the turns index: TurnsBetween, for a run of two), and the oldest (no
// turns_to, no index keys: Turns).
func TestPageTurnsOfOlderLayouts(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConversations(c, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	base := now.Truncate(time.Hour).Add(-50 * time.Minute)
	var ids []string
	for i := range 5 {
		cv := testConversation(base.Add(time.Duration(i) * time.Second))
		first := voiceops.Turn{Index: 0, AgentResponse: fmt.Sprintf("hello %d", i), AgentResponseAt: now}
		if err := s.CreateConversation(ctx, cv, &first); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cv.ID)
	}
	layout := map[string]string{ids[1]: "index", ids[2]: "index", ids[3]: "oldest"}
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(names.Conversations)})
	if err != nil {
		t.Fatal(err)
	}
	str := func(it map[string]types.AttributeValue, name string) string {
		v, _ := it[name].(*types.AttributeValueMemberS)
		if v == nil {
			return ""
		}
		return v.Value
	}
	for _, it := range out.Items {
		pk, sk := str(it, tables.PK), str(it, tables.SK)
		id := sk
		if strings.HasPrefix(pk, "T#") {
			id = pk[strings.LastIndex(pk, "#")+1:]
		}
		kind, ok := layout[id]
		if !ok {
			continue
		}
		if sk == id {
			delete(it, "turns_to")
		} else {
			delete(it, "base")
			delete(it, "written")
			if kind == "index" {
				started, _, _ := voiceops.ParseConversationID(id)
				it[tables.TurnsGSI.PartitionKey] = &types.AttributeValueMemberS{Value: "acct_a#proj_a#" + started.UTC().Format("2006010215")}
				it[tables.TurnsGSI.SortKey] = &types.AttributeValueMemberS{Value: id + "#" + sk}
			}
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(names.Conversations), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.TurnsBetween(ctx, "acct_a", "proj_a", ids[0], ids[4])
	if err != nil || len(runs) != 2 || len(runs[ids[1]]) != 1 || len(runs[ids[2]]) != 1 {
		t.Fatalf("TurnsBetween: %v, %v; want the two conversations of the index layout", runs, err)
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
	if err != nil || got != 5 {
		t.Fatalf("page: %d conversations, %v", got, err)
	}
}
