package dynamo

import (
	"context"
	"time"

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

// touchItem is a new touch of the scope at `at`: an empty item (no counts,
// no activity) that readers never read, but whose insert the metrics
// table's stream turns into an evaluation of the scope. The API's wake-ups
// put it in the transaction of the change that wakes (Config.txWake: a
// rule just created or changed is evaluated within a second).
func touchItem(accountID, projectID string, at time.Time) item {
	return item{
		metricAttrPK:  avS(MetricPartition(accountID, projectID)),
		metricAttrSK:  avS(MetricTouchKey()),
		metricAttrTTL: avN(MetricExpiry(at.UTC().Truncate(time.Minute)).Unix()),
	}
}
