package dynamo_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/platform/idempotency"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// echoDB sends every write twice, answering the second time: what the SDK
// does when the answer to an applied write breaks off ("use of closed
// network connection" on a 200, aws-sdk-go-v2#1825) and it retries. The
// retry's conditions fail on the call's own items.
type echoDB struct{ dynamo.DB }

func (e echoDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if _, err := e.DB.PutItem(ctx, in, o...); err != nil {
		return nil, err
	}
	return e.DB.PutItem(ctx, in, o...)
}

func (e echoDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if _, err := e.DB.TransactWriteItems(ctx, in, o...); err != nil {
		return nil, err
	}
	return e.DB.TransactWriteItems(ctx, in, o...)
}

// TestRetriedWritesAreNotRefusedByThemselves: a create, a turn, an update,
// an event, a call's move and an Idempotency-Key claim whose first attempt was applied but not answered
// succeed, and are applied once (the rule limit counts each rule once).
func TestRetriedWritesAreNotRefusedByThemselves(t *testing.T) {
	c := client(t)
	names := newTables(t, c)
	plain := dynamo.NewStores(c, names)
	echo := dynamo.NewStores(echoDB{c}, names)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := plain.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_echo", Name: "Echo", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}

	for i := range voiceops.MaxRulesPerAccount {
		r := voiceops.AlertRule{ID: voiceops.NewID(voiceops.PrefixRule), AccountID: "acct_echo", Name: "r", Metric: voiceops.MetricAPIErrors,
			Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m, Enabled: true, State: voiceops.StateOK,
			CreatedAt: now, UpdatedAt: now, Since: &now, Version: 1}
		if err := echo.Rules.CreateRule(ctx, r); err != nil {
			t.Fatalf("CreateRule %d, answered on its retry: %v", i+1, err)
		}
	}
	extra := voiceops.AlertRule{ID: voiceops.NewID(voiceops.PrefixRule), AccountID: "acct_echo", Name: "r", Metric: voiceops.MetricAPIErrors,
		Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m, Enabled: true, CreatedAt: now, UpdatedAt: now, Since: &now, Version: 1}
	if err := plain.Rules.CreateRule(ctx, extra); voiceops.KindOf(err) != voiceops.KindConflict {
		t.Errorf("an 11th rule: want the limit (each retried create counted once), got %v", err)
	}

	conv := voiceops.Conversation{ID: voiceops.NewConversationID(now), AccountID: "acct_echo", ProjectID: "proj_echo",
		Environment: voiceops.EnvLive, Channel: voiceops.ChannelAPI, StartedAt: now, InProgress: true, NumTurns: 1,
		ExpiresAt: now.Add(time.Hour), Version: 1}
	if err := echo.Conversations.CreateConversation(ctx, conv, &voiceops.Turn{Index: 0, UserInputAt: now, AgentResponse: "hi"}); err != nil {
		t.Fatalf("CreateConversation: %v", err)
	}
	next := conv
	next.NumTurns, next.Version = 2, 2
	if err := echo.Conversations.AddTurn(ctx, next, voiceops.Turn{Index: 1, UserInputAt: now, UserInput: "hello"}, 1); err != nil {
		t.Fatalf("AddTurn: %v", err)
	}
	ended := next
	end := now.Add(time.Second)
	ended.InProgress, ended.EndedAt, ended.EndReason, ended.Version = false, &end, voiceops.EndClosed, 3
	if err := echo.Conversations.UpdateConversation(ctx, ended, 2); err != nil {
		t.Fatalf("UpdateConversation: %v", err)
	}
	turns, err := plain.Conversations.Turns(ctx, "acct_echo", "proj_echo", conv.ID)
	if err != nil || len(turns) != 2 {
		t.Errorf("turns %d, %v", len(turns), err)
	}

	ev := voiceops.AlertEvent{ID: voiceops.NewID(voiceops.PrefixEvent), AccountID: "acct_echo", Type: voiceops.EventTriggered, CreatedAt: now, Body: []byte(`{}`)}
	if err := echo.Events.PutEvent(ctx, ev); err != nil {
		t.Errorf("PutEvent: %v", err)
	}
	other := ev
	other.CreatedAt = now.Add(time.Millisecond)
	if err := plain.Events.PutEvent(ctx, other); err != voiceops.ErrAlreadyExists {
		t.Errorf("PutEvent of another event under a taken ID: want ErrAlreadyExists, got %v", err)
	}
	call := voiceops.Call{SID: voiceops.NewCallSID(), AccountID: "acct_echo", ProjectID: "proj_echo", ToNumber: "+14155550100",
		Status: voiceops.CallQueued, CreatedAt: now, UpdatedAt: now}
	calls := dynamo.NewCalls(c, names.Calls)
	if err := calls.CreateCall(ctx, call); err != nil {
		t.Fatal(err)
	}
	if moved, err := dynamo.NewCalls(echoDB{c}, names.Calls).MoveCall(ctx, call.SID, voiceops.CallCalling, "", now); err != nil || moved.Status != voiceops.CallCalling {
		t.Errorf("MoveCall: %+v, %v", moved, err)
	}
	if _, err := calls.MoveCall(ctx, call.SID, voiceops.CallCalling, "", now); err != voiceops.ErrCallTransition {
		t.Errorf("another move from queued: want ErrCallTransition, got %v", err)
	}

	reqs := dynamo.NewRequests(echoDB{c}, names.Requests, names.Config)
	sc := idempotency.Scope{AccountID: "acct_echo", KeyID: "key_1", Key: "k"}
	claim := idempotency.Record{Scope: sc, Fingerprint: "fp", State: idempotency.InFlight, Token: "tok", CreatedAt: now, LeaseUntil: now.Add(time.Minute)}
	if _, claimed, err := reqs.Begin(ctx, claim, now); err != nil || !claimed {
		t.Errorf("Begin: claimed %v, %v", claimed, err)
	}
}
