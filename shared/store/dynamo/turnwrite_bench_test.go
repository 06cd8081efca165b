package dynamo_test

import (
	"strings"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkAddTurnDynamo times a chat turn's write (AddTurn of a 1 KB
// turn to a conversation with 4 KB of state, unchanged) on moto (at
// TEST_AWS_ENDPOINT), the write the capacity test counts.
//
//	go test ./shared/store/dynamo -run '^$' -bench AddTurnDynamo -benchtime 200x
func BenchmarkAddTurnDynamo(b *testing.B) {
	if !awstest.Available(b) {
		b.Skip("needs moto at " + awstest.EndpointEnv)
	}
	c := awstest.DynamoDB(b)
	s := dynamo.NewConversations(c, awstest.Tables(b, c).Conversations)
	ctx := b.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	cv := voiceops.Conversation{
		ID: voiceops.NewConversationID(now), AccountID: "acct_a", ProjectID: "proj_turns", Environment: voiceops.EnvLive,
		Channel: voiceops.ChannelWebchat, StartedAt: now, InProgress: true, Version: 1, NumTurns: 1,
		State: map[string]any{"s": strings.Repeat("x", 4096)}, ExpiresAt: now.Add(90 * 24 * time.Hour), IdleDue: now.Add(time.Hour),
	}
	if err := s.CreateConversation(ctx, cv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("y", 500)
	for b.Loop() {
		nx := cv
		nx.Version, nx.NumTurns = cv.Version+1, cv.NumTurns+1
		t := voiceops.Turn{Index: cv.NumTurns, UserInput: text, AgentResponse: text, AgentResponseAt: now, Latency: time.Second}
		if err := s.AddTurn(ctx, nx, t, cv.Version); err != nil {
			b.Fatal(err)
		}
		cv = nx
	}
}
