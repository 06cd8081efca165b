// Package dynamohttp builds the HTTP platform of a Lambda function that
// serves keyed requests, on DynamoDB: the API keys, the guards (rate limits
// and Idempotency-Keys on the requests table) and the count of 5xx answers
// (api_errors on the metrics table). Each function's main names its tables
// and key reader; what the platform is made of is written here once.
package dynamohttp

import (
	"log/slog"
	"time"

	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Tables are the tables the platform reads and writes.
type Tables struct {
	Config   string // the accounts' limits, read by the rate limiter
	Requests string // rate-limit buckets and Idempotency-Key records
	Metrics  string // api_errors
}

// Config returns the platform of a function in region whose keys kr reads;
// its clock is time.Now, its access lines go out with its metrics
// (lambdamain.AccessLogger). The caller adds what only some functions set
// (Projects, InternalKey, Deadline).
func Config(db dynamo.DB, kr auth.KeyReader, region voiceops.Region, t Tables, log *slog.Logger, metrics *emf.Batch) httpapi.Config {
	return httpapi.Config{
		Keys:       auth.New(kr, region, time.Now),
		CountError: dynamo.NewMetricCounts(db, t.Metrics).APIError,
		Guards:     httpapi.NewGuards(dynamo.NewRequests(db, t.Requests, t.Config), time.Now),
		Now:        time.Now,
		Log:        log,
		AccessLog:  lambdamain.AccessLogger(metrics),
		Metrics:    metrics,
	}
}
