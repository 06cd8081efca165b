package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// MetricCounts writes counts on the metrics table: what a function that
// only counts (the API functions' own api_errors) records, without linking
// the latency sketches. It adds into the items the metric store adds into
// (the layout in metriclayout.go), so readers see no difference.
type MetricCounts struct {
	db    DB
	table string
	now   func() time.Time // decides whether a minute is open
}

// NewMetricCounts returns a writer of counts on table.
func NewMetricCounts(db DB, table string) *MetricCounts {
	return &MetricCounts{db: db, table: table, now: time.Now}
}

// APIError records one api_errors event of the account (and project) at
// at: like every metric event, it also marks activity, on the account's
// scope and, with a project, on the project's.
func (m *MetricCounts) APIError(ctx context.Context, accountID, projectID string, at time.Time) error {
	minute := at.UTC().Truncate(time.Minute)
	now := m.now()
	partitions := []string{MetricPartition(accountID, "")}
	if projectID != "" {
		partitions = append(partitions, MetricPartition(accountID, projectID))
	}
	one := []MetricNumber{{Attr: MetricCountAttr(voiceops.KindActivity), Value: "1"}, {Attr: MetricCountAttr(voiceops.KindAPIErrors), Value: "1"}}
	for _, pk := range partitions {
		if err := AddMetrics(ctx, m.db, m.table, pk, minute, now, one); err != nil {
			return wrap("APIError", err)
		}
	}
	return nil
}

// Touch writes an empty item (no counts, no activity) in the scope's
// partition: readers never read it, but the metrics table's stream sees a
// new item and the evaluator evaluates the scope's rules. The API's
// wake-ups write the same item in the transaction of the change that
// wakes (Config: a rule just created or changed is evaluated within a
// second).
func (m *MetricCounts) Touch(ctx context.Context, accountID, projectID string, at time.Time) error {
	_, err := m.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(m.table), Item: touchItem(accountID, projectID, at)})
	if err != nil {
		return wrap("Touch", err)
	}
	return nil
}

// touchItem is a new touch of the scope at `at`: the item Touch puts, and
// the Put of a wake-up in a rule's or a silence's transaction (Config).
func touchItem(accountID, projectID string, at time.Time) item {
	return item{
		metricAttrPK:  avS(MetricPartition(accountID, projectID)),
		metricAttrSK:  avS(MetricTouchKey()),
		metricAttrTTL: avN(MetricExpiry(at.UTC().Truncate(time.Minute)).Unix()),
	}
}
