package dynamo

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// MetricCounts writes count-only items on the metrics table: what a
// function that only counts (the API functions' own api_errors) records,
// without linking the latency sketches (sketches-go and protobuf, some 3 MB
// of binary). The items are the ones the metric store writes for buckets
// without turns (the layout in metriclayout.go), so readers see no difference.
type MetricCounts struct {
	db    DB
	table string
}

// NewMetricCounts returns a writer of count items on table.
func NewMetricCounts(db DB, table string) *MetricCounts { return &MetricCounts{db: db, table: table} }

// APIError records one api_errors event of the account (and project) at
// at: like every metric event, it also marks activity, on the account's
// scope and, with a project, on the project's.
func (m *MetricCounts) APIError(ctx context.Context, accountID, projectID string, at time.Time) error {
	minute := at.UTC().Truncate(time.Minute)
	partitions := []string{MetricPartition(accountID, "")}
	if projectID != "" {
		partitions = append(partitions, MetricPartition(accountID, projectID))
	}
	for _, pk := range partitions {
		_, err := m.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(m.table), Item: item{
			metricAttrPK:        avS(pk),
			metricAttrSK:        avS(MetricSortKey(minute)),
			metricAttrTTL:       avN(MetricExpiry(minute).Unix()),
			MetricAttrActivity:  avN(1),
			MetricAttrAPIErrors: avN(1),
		}})
		if err != nil {
			return wrap("APIError", err)
		}
	}
	return nil
}

// Touch writes an empty item (no counts, no activity) in the scope's
// partition at the minute of at: readers see nothing, but the metrics
// table's stream sees a new item and the evaluator evaluates the scope's
// rules (a rule just created or changed is evaluated within a second).
func (m *MetricCounts) Touch(ctx context.Context, accountID, projectID string, at time.Time) error {
	minute := at.UTC().Truncate(time.Minute)
	_, err := m.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(m.table), Item: item{
		metricAttrPK:  avS(MetricPartition(accountID, projectID)),
		metricAttrSK:  avS(MetricSortKey(minute)),
		metricAttrTTL: avN(MetricExpiry(minute).Unix()),
	}})
	if err != nil {
		return wrap("Touch", err)
	}
	return nil
}
