package evaluator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// shardAccounts returns n account IDs that all fall in rule shard 0.
func shardAccounts(n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("acct_b%06d", i)
		if voiceops.RuleShardOf(id) == 0 {
			out = append(out, id)
		}
	}
	return out
}

// seedShard gives each account a project, 10 rules (5 on the project, 5
// account-wide: two scopes) that do not breach, and five minutes of data.
func seedShard(tb testing.TB, stores voiceops.Stores, rec buckets.Recorder, accounts []string, now time.Time) {
	ctx := context.Background()
	var events []metrics.Event
	for _, acct := range accounts {
		if err := stores.Accounts.CreateAccount(ctx, voiceops.Account{ID: acct, CreatedAt: now}); err != nil {
			tb.Fatal(err)
		}
		if err := stores.Accounts.CreateProject(ctx, voiceops.Project{ID: "p", AccountID: acct, CreatedAt: now}); err != nil {
			tb.Fatal(err)
		}
		proj := "p"
		for i := range voiceops.MaxRulesPerAccount {
			var pid *string
			if i%2 == 0 {
				pid = &proj
			}
			r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), acct, voiceops.RuleInput{
				Name: "r", ProjectID: pid, Metric: voiceops.Metrics[i%len(voiceops.Metrics)], Operator: voiceops.OpGreater,
				Threshold: 1_000_000, Window: voiceops.Windows[i%len(voiceops.Windows)],
			}, now.Add(-time.Hour))
			if err := stores.Rules.CreateRule(ctx, r); err != nil {
				tb.Fatal(err)
			}
		}
		for k := range 5 {
			at := now.Add(-time.Duration(k) * time.Minute)
			events = append(events,
				metrics.Event{AccountID: acct, ProjectID: proj, Kind: metrics.TurnLatency, Value: float64(200 + 100*k), At: at},
				metrics.Event{AccountID: acct, ProjectID: proj, Kind: metrics.CallVolume, Value: 1, At: at})
		}
	}
	if err := rec.Record(ctx, events...); err != nil {
		tb.Fatal(err)
	}
}

// runShardSteady evaluates shard 0 once (the first evaluation writes every
// rule: null becomes a value), then b.N times at steady state, and reports
// what one steady run costs per rule.
func runShardSteady(b *testing.B, ev *Evaluator, now time.Time, reads func() int) {
	ctx := context.Background()
	ev.Now = func() time.Time { return now }
	if _, err := ev.RunShard(ctx, 0); err != nil {
		b.Fatal(err)
	}
	var total Stats
	reads()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		at := now.Add(time.Duration(i+1) * time.Second)
		ev.Now = func() time.Time { return at }
		st, err := ev.RunShard(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		total.Rules += st.Rules
		total.Written += st.Written
		total.Marks += st.Marks
	}
	elapsed := time.Since(start)
	b.StopTimer()
	rules := float64(total.Rules)
	b.ReportMetric(rules/elapsed.Seconds(), "rules/s")
	b.ReportMetric(float64(reads())/rules, "metric-reads/rule")
	b.ReportMetric(float64(total.Written)/rules, "rule-writes/rule")
	b.ReportMetric(float64(total.Marks)/rules, "marks/rule")
}

// BenchmarkShardSteadyState runs one shard of 2,000 accounts (20,000
// rules, 4,000 scopes) on the in-memory stores at steady state, before
// (every rule rewritten each run) and now (one mark per scope):
//
//	go test -run '^$' -bench ShardSteadyState -benchtime 5x ./shared/alerts/evaluator/
func BenchmarkShardSteadyState(b *testing.B) {
	for _, mode := range []string{"write-every-rule", "mark-per-scope"} {
		b.Run(mode, func(b *testing.B) {
			now := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
			store := memory.New()
			stores := store.Stores()
			m := &countingMetrics{Store: memory.NewMetrics()}
			seedShard(b, stores, buckets.Recorder{Store: m.Store}, shardAccounts(2000), now)
			ev := &Evaluator{Rules: stores.Rules, Events: stores.Events, Metrics: m,
				Fanout: func(context.Context, voiceops.AlertEvent) error { return nil },
				Log:    slog.New(slog.NewTextHandler(io.Discard, nil))}
			if mode == "mark-per-scope" {
				ev.Marks = stores.Evaluations
			}
			runShardSteady(b, ev, now, func() int {
				m.mu.Lock()
				defer m.mu.Unlock()
				n := m.reads
				m.reads = 0
				return n
			})
		})
	}
}

// callCounter counts the DynamoDB calls of the stores, by operation.
type callCounter struct {
	dynamo.DB
	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) add(op string) {
	c.mu.Lock()
	c.calls[op]++
	c.mu.Unlock()
}

func (c *callCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.calls
	c.calls = map[string]int{}
	return out
}

func (c *callCounter) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.add("Query")
	return c.DB.Query(ctx, in, o...)
}

func (c *callCounter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.add("PutItem")
	return c.DB.PutItem(ctx, in, o...)
}

func (c *callCounter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.add("UpdateItem")
	return c.DB.UpdateItem(ctx, in, o...)
}

func (c *callCounter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.add("TransactWriteItems")
	return c.DB.TransactWriteItems(ctx, in, o...)
}

// BenchmarkShardOnDynamoDB runs one shard of 40 accounts (400 rules) on the
// DynamoDB stores at moto (TEST_AWS_ENDPOINT), and reports the DynamoDB
// calls of one steady run per rule: what the cost model multiplies. (The
// rate is moto's, far below DynamoDB's.)
//
//	TEST_AWS_ENDPOINT=http://127.0.0.1:5101 go test -run '^$' -bench ShardOnDynamoDB -benchtime 3x ./shared/alerts/evaluator/
func BenchmarkShardOnDynamoDB(b *testing.B) {
	client := awstest.DynamoDB(b)
	names := awstest.Tables(b, client)
	db := &callCounter{DB: client, calls: map[string]int{}}
	stores := dynamo.NewStores(db, names)
	ms := metricstore.New(client, names.Metrics)
	now := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	seedShard(b, stores, buckets.Recorder{Store: ms}, shardAccounts(40), now)
	m := &countingMetrics{Store: ms}
	ev := &Evaluator{Rules: stores.Rules, Events: stores.Events, Metrics: m, Marks: stores.Evaluations,
		Fanout: func(context.Context, voiceops.AlertEvent) error { return nil },
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil))}
	calls := map[string]int{}
	first := true // the first call resets: setup and the first run are not counted
	runShardSteady(b, ev, now, func() int {
		for op, n := range db.take() {
			if !first {
				calls[op] += n
			}
		}
		first = false
		m.mu.Lock()
		defer m.mu.Unlock()
		n := m.reads
		m.reads = 0
		return n
	})
	rules := float64(b.N * 40 * voiceops.MaxRulesPerAccount)
	for _, op := range []string{"Query", "UpdateItem", "PutItem", "TransactWriteItems"} {
		b.ReportMetric(float64(calls[op])/rules, "config-"+op+"/rule")
	}
}
