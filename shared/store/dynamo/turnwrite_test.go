package dynamo_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestUncommittedTurn: a turn item whose conversation write never came (a
// writer that crashed between its two writes) is never shown, blocks a
// turn built on the same version only while its writer may still be
// running, and after that is fenced off and replaced.
func TestUncommittedTurn(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	s := dynamo.NewConversations(c, names.Conversations)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	conv := testConversation(now)
	if err := s.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0, AgentResponse: "Hello", AgentResponseAt: now}); err != nil {
		t.Fatal(err)
	}
	orphan := func(written time.Time) {
		t.Helper()
		s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
		n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(names.Conversations), Item: map[string]types.AttributeValue{
			"pk": s("T#" + conv.AccountID + "#" + conv.ProjectID + "#" + conv.ID), "sk": s("00000001"),
			"index": n(1), "agent_response": s("never committed"), "latency_ns": n(0), "is_ood": &types.AttributeValueMemberBOOL{},
			"is_silence": &types.AttributeValueMemberBOOL{}, "function_errors": n(0),
			"base": n(1), "written": s(written.UTC().Format("2006-01-02T15:04:05.000000000Z")),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	turns := func(want ...string) {
		t.Helper()
		ts, err := s.Turns(ctx, conv.AccountID, conv.ProjectID, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tn := range ts {
			got = append(got, tn.AgentResponse)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("turns %q, want %q", got, want)
		}
	}
	version := func() int64 {
		t.Helper()
		got, err := s.GetConversation(ctx, conv.AccountID, conv.ProjectID, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Version
	}
	add := func(expect int64) error {
		next := withVersion(conv, expect+1)
		next.NumTurns = 2
		return s.AddTurn(ctx, next, voiceops.Turn{Index: 1, AgentResponse: "committed", AgentResponseAt: now}, expect)
	}

	// A writer that may still be running: refused, nothing fenced.
	orphan(time.Now())
	turns("Hello")
	if err := add(1); !errors.Is(err, voiceops.ErrConflictingWrite) {
		t.Fatalf("AddTurn over a running writer's turn: %v", err)
	}
	if v := version(); v != 1 {
		t.Errorf("version %d after a refused turn, want 1", v)
	}
	// A writer long gone: refused once, and its version fenced off.
	orphan(time.Now().Add(-10 * time.Minute))
	if err := add(1); !errors.Is(err, voiceops.ErrConflictingWrite) {
		t.Fatalf("AddTurn over a crashed writer's turn: %v", err)
	}
	if v := version(); v != 2 {
		t.Fatalf("version %d after the fence, want 2", v)
	}
	turns("Hello")
	// Read again and retried: the uncommitted turn is replaced.
	if err := add(2); err != nil {
		t.Fatal(err)
	}
	turns("Hello", "committed")
	if v := version(); v != 3 {
		t.Errorf("version %d, want 3", v)
	}
}
