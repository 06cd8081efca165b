package metricstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// TestMetricCountsReadBackAsAPIErrors: an api_error written by the lean
// writer (shared/store/dynamo, no sketches) reads back through the metric store
// like a recorded event: the two writers share one item layout.
func TestMetricCountsReadBackAsAPIErrors(t *testing.T) {
	db := client(t)
	table := newTable(t, db)
	now := time.Now().UTC()
	c := dynamo.NewMetricCounts(db, table)
	if err := c.APIError(context.Background(), "acct_m", "proj_m", now); err != nil {
		t.Fatal(err)
	}
	if err := c.APIError(context.Background(), "acct_m", "", now); err != nil {
		t.Fatal(err)
	}
	m := metricstore.New(db, table)
	for scope, want := range map[metrics.Scope]int64{{AccountID: "acct_m"}: 2, {AccountID: "acct_m", ProjectID: "proj_m"}: 1} {
		bs, err := m.ReadBuckets(context.Background(), scope, now.Add(-time.Hour), now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		sum := buckets.Summarize(bs, now.Add(-time.Hour), now.Add(time.Minute))
		if v, _ := sum.Value(voiceops.MetricAPIErrors); v != want || sum.Counts.Of(metrics.Activity) != want {
			t.Errorf("%v: api_errors %d activity %d, want %d", scope, v, sum.Counts.Of(metrics.Activity), want)
		}
	}
}

// TestWakeUpIsInvisibleToReaders: the touch a rule's wake-up writes in the
// metrics table, in the rule's transaction (so that the table's stream
// wakes the evaluator), adds no activity: the scope stays no_data.
func TestWakeUpIsInvisibleToReaders(t *testing.T) {
	db := client(t)
	names := awstest.Tables(t, db)
	ctx := context.Background()
	now := time.Now().UTC()
	s := dynamo.NewStores(db, names)
	if err := s.Accounts.CreateAccount(ctx, voiceops.Account{ID: "acct_t", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	proj := "proj_t"
	if err := s.Accounts.CreateProject(ctx, voiceops.Project{ID: proj, AccountID: "acct_t", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	r := voiceops.NewRule(voiceops.NewID(voiceops.PrefixRule), "acct_t", voiceops.RuleInput{Name: "w", ProjectID: &proj,
		Metric: voiceops.MetricAPIErrors, Operator: voiceops.OpGreater, Threshold: 1, Window: voiceops.Window5m}, now)
	r.Wake = true
	if err := s.Rules.CreateRule(ctx, r); err != nil {
		t.Fatal(err)
	}
	scope := metrics.Scope{AccountID: "acct_t", ProjectID: proj}
	items, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(names.Metrics), KeyConditionExpression: aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: dynamo.MetricPartition("acct_t", proj)}}})
	if err != nil {
		t.Fatal(err)
	}
	if items.Count != 1 {
		t.Fatalf("%d items in the scope's partition, want the wake-up's touch", items.Count)
	}
	bs, err := metricstore.New(db, names.Metrics).ReadBuckets(ctx, scope, now.Add(-time.Hour), now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 0 {
		t.Fatalf("%d buckets, want none (a touch is never read)", len(bs))
	}
	if sum := buckets.Summarize(bs, now.Add(-time.Hour), now.Add(time.Minute)); sum.Active() {
		t.Errorf("a touch counts as activity: %+v", sum.Counts)
	}
}
