package evaluator

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestStreamAndScheduleRaceOnDynamoDB is the race of
// TestStreamAndScheduleRaceMakeOneTransition on the DynamoDB stores (moto):
// the rule's version condition and the event written in the same
// transaction make one transition and one event. Both evaluators read the
// rule before either writes; the schedule's writes once the stream's
// transaction is in. (moto checks a transaction's conditions without
// isolating it from one arriving at the same instant, which DynamoDB's
// serializable transactions do: written at once, both passed on moto now
// and then; awstest.Serial below.)
func TestStreamAndScheduleRaceOnDynamoDB(t *testing.T) {
	if !awstest.Available(t) {
		return
	}
	client := awstest.DynamoDB(t)
	names := awstest.Tables(t, client)
	// One call at a time: moto undoes a refused transaction by putting back
	// its copy of the table, which erased the winner's MarkFannedOut made
	// meanwhile (the event stayed pending); DynamoDB applies each call
	// atomically. The race is in the evaluators, above the calls.
	db := awstest.Serial(client)
	stores := dynamo.NewStores(db, names)
	ms := metricstore.New(db, names.Metrics)
	ctx := context.Background()
	now := time.Now().UTC()
	if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_r", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "p1", AccountID: "acct_r", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	p1 := "p1"
	r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), "acct_r", voiceops.RuleInput{Name: "r", ProjectID: &p1,
		Metric: voiceops.MetricCallCrashes, Operator: voiceops.OpGreaterEqual, Threshold: 1, Window: voiceops.Window5m}, now.Add(-time.Minute))
	if err := stores.Rules.CreateRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := (&buckets.Recorder{Store: ms}).Record(ctx, metrics.Event{AccountID: "acct_r", ProjectID: "p1", Kind: metrics.CallCrashes, Value: 1, At: now}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var fanned []voiceops.AlertEvent
	var arrived sync.WaitGroup
	arrived.Add(2)
	// second holds the schedule's write until the stream's has landed
	// (the rule's version moved), bounded so that a bug fails, not hangs.
	second := func(voiceops.AlertRule) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if got, err := stores.Rules.GetRule(ctx, "acct_r", r.ID); err == nil && got.Version > r.Version {
				return
			}
		}
	}
	newEv := func(then func(voiceops.AlertRule)) *Evaluator {
		return &Evaluator{Rules: stores.Rules, Events: stores.Events, Metrics: ms, Marks: stores.Evaluations,
			Fanout: func(ctx context.Context, e voiceops.AlertEvent) error {
				mu.Lock()
				fanned = append(fanned, e)
				mu.Unlock()
				return stores.Events.MarkFannedOut(ctx, e.AccountID, e.ID)
			},
			Now: func() time.Time { return now.Add(time.Second) }, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			BeforeWrite: onlyFirst(func(r voiceops.AlertRule) { arrived.Done(); arrived.Wait(); then(r) }),
		}
	}
	var wg sync.WaitGroup
	stats := make([]Stats, 2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		var err error
		if stats[0], err = newEv(func(voiceops.AlertRule) {}).EvaluateScopes(ctx, []metrics.Scope{{AccountID: "acct_r", ProjectID: "p1"}}); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		var err error
		if stats[1], err = newEv(second).RunShard(ctx, voiceops.RuleShardOf("acct_r")); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	got, err := stores.Rules.GetRule(ctx, "acct_r", r.ID)
	if err != nil || got.State != voiceops.StateAlert {
		t.Fatalf("rule %s %v", got.State, err)
	}
	if len(fanned) != 1 || fanned[0].Type != voiceops.EventTriggered {
		t.Fatalf("events %v, want one alerts.triggered", fanned)
	}
	if stats[0].Conflicts+stats[1].Conflicts != 1 {
		t.Errorf("stats %+v: want one conflict between them", stats)
	}
	pending, err := stores.Events.PendingEvents(ctx, now.Add(time.Hour), 10)
	if err != nil || len(pending) != 0 {
		t.Errorf("pending %v %v", pending, err)
	}
}
