package dynamo_test

import (
	"fmt"
	"testing"
	"time"

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
	base := now.Truncate(time.Hour).Add(-50 * time.Minute)
	for i := range 30 {
		cv := voiceops.Conversation{
			AccountID: "acct_a", ProjectID: "proj_page", Environment: voiceops.EnvLive, Channel: voiceops.ChannelWebchat,
			StartedAt: base.Add(time.Duration(i) * time.Second), InProgress: true, Version: 1, NumTurns: 1,
			ExpiresAt: now.Add(90 * 24 * time.Hour),
		}
		cv.ID = fmt.Sprintf("%s%013d%d%s", voiceops.PrefixConversation, cv.StartedAt.UnixMilli(), i%voiceops.ConversationShards, voiceops.RandomBase62(20))
		if err := s.CreateConversation(ctx, cv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
			b.Fatal(err)
		}
		for j := 1; j < 5; j++ {
			nx := cv
			nx.Version, nx.NumTurns = int64(j+1), j+1
			if err := s.AddTurn(ctx, nx, voiceops.Turn{Index: j, UserInput: "my balance please", AgentResponse: "It is 42.", AgentResponseAt: now}, int64(j)); err != nil {
				b.Fatal(err)
			}
			cv = nx
		}
	}
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
