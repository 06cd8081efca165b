package evaluator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// BenchmarkEvaluate10kAccounts evaluates 10,000 accounts with 10 rules each
// (one project per account, rules on it and account-wide) on the in-memory
// stores, and reports rules evaluated per second and metric reads per rule.
//
//	go test -run '^$' -bench Evaluate -benchtime 3x ./shared/alerts/evaluator/
func BenchmarkEvaluate10kAccounts(b *testing.B) {
	const accounts, rulesPer = 10_000, 10
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	store := memory.New()
	stores := store.Stores()
	m := &countingMetrics{Store: memory.NewMetrics()}
	rec := buckets.Recorder{Store: m.Store}
	var events []metrics.Event
	for a := 0; a < accounts; a++ {
		acct := fmt.Sprintf("acct_%05d", a)
		if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: acct, CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
		if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "p", AccountID: acct, CreatedAt: now}); err != nil {
			b.Fatal(err)
		}
		proj := "p"
		for i := 0; i < rulesPer; i++ {
			var pid *string
			if i%2 == 0 {
				pid = &proj
			}
			r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct, voiceops.RuleInput{
				Name: "r", ProjectID: pid, Metric: voiceops.Metrics[i%len(voiceops.Metrics)], Operator: voiceops.OpGreater,
				Threshold: int64(i * 100), Window: voiceops.Windows[i%len(voiceops.Windows)],
			}, now)
			if err := stores.Rules.CreateRule(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
		for k := 0; k < 5; k++ {
			events = append(events,
				metrics.Event{AccountID: acct, ProjectID: proj, Kind: metrics.TurnLatency, Value: float64(200 + 100*k), At: now.Add(-time.Duration(k) * time.Minute)},
				metrics.Event{AccountID: acct, ProjectID: proj, Kind: metrics.CallVolume, Value: 1, At: now.Add(-time.Duration(k) * time.Minute)})
		}
	}
	if err := rec.Record(ctx, events...); err != nil {
		b.Fatal(err)
	}
	ev := &Evaluator{
		Rules: stores.Rules, Events: stores.Events, Metrics: m,
		Fanout: func(ctx context.Context, e voiceops.AlertEvent) error {
			return stores.Events.MarkFannedOut(ctx, e.AccountID, e.ID)
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	b.ResetTimer()
	var rules, reads int
	start := time.Now()
	for i := 0; i < b.N; i++ {
		at := now.Add(time.Duration(i) * time.Second)
		ev.Now = func() time.Time { return at }
		m.reads = 0
		st, err := ev.Run(ctx)
		if err != nil {
			b.Fatal(err)
		}
		rules += st.Rules
		reads += m.reads
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(rules)/elapsed.Seconds(), "rules/s")
	b.ReportMetric(float64(reads)/float64(rules), "reads/rule")
	b.ReportMetric(float64(reads)/float64(b.N), "reads/run")
}
