package dynamo

import (
	"fmt"
	"strings"
	"time"

	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The metrics table holds one item per write of a scope's minute:
//
//	pk=M#<account>             sk=<minute: 10-digit unix seconds>#<random writer ID>
//	pk=M#<account>#<project>   (same)
//	attributes: activity, turns, api_errors, function_errors, call_crashes,
//	call_volume (numbers, absent when 0), latency (binary: the DDSketch in
//	its protobuf encoding, absent without turns), expires_at = minute + 48 h
//	(voiceops.MetricMinuteRetention: the metric series and the rule preview
//	read them; the hourly roll-ups of shared/series live on, see
//	metricstore/rollups.go).
//
// Every write adds new items rather than updating one item per minute, so
// no single item takes every write of a busy project (an item sustains
// about 1,000 writes a second; a partition far more). A read is one Query
// of the scope's partition over the sort-key range of its minutes; it
// merges the items of each minute. Account and project IDs never contain
// '#', so the keys of two scopes never collide.
//
// The layout is defined here, in the core, for the two writers: the metric
// store (shared/dynamo/metricstore, with the sketches) and MetricCounts
// (counts only, for the functions that link no sketch).
const (
	// MetricMinuteDigits is the width of the minute in the sort key: unix
	// seconds fit in 10 digits until the year 2286, and fixed width sorts
	// by time.
	MetricMinuteDigits = 10
	metricMaxMinuteSec = 9_999_999_999

	MetricAttrActivity       = "activity"
	MetricAttrTurns          = "turns"
	MetricAttrAPIErrors      = "api_errors"
	MetricAttrFunctionErrors = "function_errors"
	MetricAttrCallCrashes    = "call_crashes"
	MetricAttrCallVolume     = "call_volume"
	MetricAttrLatency        = "latency"
)

// MetricPartition returns the partition key of a scope's items (an
// account's, or with projectID a project's).
func MetricPartition(accountID, projectID string) string {
	if projectID == "" {
		return "M#" + accountID
	}
	return "M#" + accountID + "#" + projectID
}

// MetricScope returns the account and project ("" for the account's own
// scope) of a metric partition key, such as the key of a stream record of
// the metrics table; ok is false for a key of another shape.
func MetricScope(pk string) (accountID, projectID string, ok bool) {
	rest, found := strings.CutPrefix(pk, "M#")
	if !found {
		return "", "", false
	}
	accountID, projectID, _ = strings.Cut(rest, "#")
	if !voiceops.ValidTenantID(accountID) || (projectID != "" && !voiceops.ValidTenantID(projectID)) {
		return "", "", false
	}
	return accountID, projectID, true
}

// MetricMinuteKey is the sort-key prefix of a minute: its unix seconds in
// MetricMinuteDigits digits, clamped to what that width holds.
func MetricMinuteKey(t time.Time) string {
	sec := min(max(t.Unix(), 0), metricMaxMinuteSec)
	return fmt.Sprintf("%0*d", MetricMinuteDigits, sec)
}

// MetricSortKey is the sort key of a new item of a minute: the minute and
// a random writer ID, so that two writes never collide.
func MetricSortKey(minute time.Time) string {
	return MetricMinuteKey(minute) + "#" + voiceops.RandomBase62(16)
}

// MetricExpiry is when an item of a minute expires (the table's TTL).
func MetricExpiry(minute time.Time) time.Time { return minute.Add(voiceops.MetricMinuteRetention) }

// Key attributes of the metrics table.
var (
	metricAttrPK  = tables.Metrics.PartitionKey
	metricAttrSK  = tables.Metrics.SortKey
	metricAttrTTL = tables.Metrics.TTLAttribute
)
