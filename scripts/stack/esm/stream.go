package esm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// StreamMapping is the AWS::Lambda::EventSourceMapping of a DynamoDB
// stream.
type StreamMapping struct {
	Function         string
	StreamARN        string
	Region           string
	StartingPosition string // LATEST or TRIM_HORIZON
	BatchSize        int
	Window           time.Duration
	Filters          []Pattern
	Bisect           bool
	MaxRetries       int // -1: until the records expire
	MaxRecordAge     time.Duration
	ReportFailures   bool
	OnFailureQueue   string // URL of the SQS on-failure destination, or ""
	// IteratorAge, when set, is told the age of each batch's last record
	// as the function is invoked with it (Lambda's IteratorAge metric).
	IteratorAge func(time.Duration)
}

// StreamsAPI calls DynamoDB Streams' JSON API on the emulator: the records
// pass through to the event as the service returns them.
type StreamsAPI struct {
	Endpoint string
	Region   string
	Client   *http.Client
}

func (s StreamsAPI) call(ctx context.Context, op string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDBStreams_20120810."+op)
	// moto routes by the credential scope; it does not check signatures.
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=stack-runner/20260101/%s/dynamodb/aws4_request, SignedHeaders=host, Signature=0", s.Region))
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("dynamodbstreams %s: %s: %s", op, resp.Status, body)
	}
	return json.Unmarshal(body, out)
}

// Record is one stream record as the Streams API returns it; Raw is what
// the event carries.
type Record struct {
	Sequence string
	Created  time.Time
	Raw      map[string]any
}

func parseRecord(raw map[string]any, streamARN string) Record {
	r := Record{Raw: raw}
	raw["eventSourceARN"] = streamARN
	if d, ok := raw["dynamodb"].(map[string]any); ok {
		r.Sequence, _ = d["SequenceNumber"].(string)
		if t, ok := d["ApproximateCreationDateTime"].(float64); ok {
			r.Created = time.Unix(int64(t), int64((t-float64(int64(t)))*1e9))
		}
	}
	return r
}

// StreamPollInterval is how often a shard is read: Lambda polls each
// shard of a DynamoDB stream at a base rate of four times a second. The
// runner never reads faster, so that with a batching window of 0 a record
// waits for the next poll as it would on AWS (0 to 250 ms, plus the call).
const StreamPollInterval = 250 * time.Millisecond

// streamRediscover is how often the shards are listed again: new shards
// (a split, a rotation) are read from their start, so listing them late
// delays nothing but their first read.
const streamRediscover = 10 * time.Second

// RunStream reads every shard of the stream until ctx ends and hands the
// records to the function in batches. Lambda batches each shard on its
// own; here one buffer takes every shard's records in order, which is the
// same on moto, whose stream has one shard per table. Polls start at most
// every StreamPollInterval; a batch is handed over when it is full or
// when its window (from its first record) ends, at once without a window.
// A batch is handed over before the next poll, as Lambda does one batch
// of a shard (lane) at a time.
func RunStream(ctx context.Context, api StreamsAPI, q *sqs.Client, m StreamMapping, invoke Invoke, log *slog.Logger) {
	iters := map[string]string{} // shard → iterator
	seen := map[string]bool{}
	first := true
	var pending []Record
	var windowStart, lastPoll, lastDescribe time.Time
	for ctx.Err() == nil {
		if len(iters) == 0 || time.Since(lastDescribe) >= streamRediscover {
			if !m.discover(ctx, api, iters, seen, first, log) {
				sleep(ctx, time.Second)
				continue
			}
			lastDescribe, first = time.Now(), false
		}
		if time.Since(lastPoll) >= StreamPollInterval {
			lastPoll = time.Now()
			for shard, it := range iters {
				var out struct {
					Records           []map[string]any
					NextShardIterator *string
				}
				if err := api.call(ctx, "GetRecords", map[string]any{"ShardIterator": it, "Limit": min(1000, max(1, m.BatchSize))}, &out); err != nil {
					if ctx.Err() != nil {
						return
					}
					log.Warn("stream mapping", "function", m.Function, "err", err)
					continue
				}
				if out.NextShardIterator == nil {
					delete(iters, shard)
				} else {
					iters[shard] = *out.NextShardIterator
				}
				for _, raw := range out.Records {
					if len(pending) == 0 {
						windowStart = time.Now()
					}
					pending = append(pending, parseRecord(raw, m.StreamARN))
				}
			}
		}
		if len(pending) > 0 && (len(pending) >= m.BatchSize || time.Since(windowStart) >= m.Window) {
			batch := pending[:min(len(pending), max(1, m.BatchSize))]
			pending = pending[len(batch):]
			if len(pending) > 0 {
				windowStart = time.Now()
			}
			for _, failed := range m.Process(ctx, batch, invoke, time.Now) {
				m.sendFailure(ctx, q, failed, log)
			}
			continue
		}
		next := lastPoll.Add(StreamPollInterval)
		if len(pending) > 0 && windowStart.Add(m.Window).Before(next) {
			next = windowStart.Add(m.Window)
		}
		sleep(ctx, max(time.Until(next), time.Millisecond))
	}
}

// discover lists the stream's shards and gets an iterator for each new
// one; it reports whether the listing succeeded.
func (m StreamMapping) discover(ctx context.Context, api StreamsAPI, iters map[string]string, seen map[string]bool, first bool, log *slog.Logger) bool {
	var desc struct {
		StreamDescription struct {
			Shards []struct{ ShardId string }
		}
	}
	if err := api.call(ctx, "DescribeStream", map[string]any{"StreamArn": m.StreamARN}, &desc); err != nil {
		if ctx.Err() == nil {
			log.Warn("stream mapping", "function", m.Function, "err", err)
		}
		return false
	}
	for _, sh := range desc.StreamDescription.Shards {
		if seen[sh.ShardId] {
			continue
		}
		typ := "TRIM_HORIZON" // shards that appear later are read whole
		if first {
			typ = m.StartingPosition
		}
		var it struct{ ShardIterator string }
		if err := api.call(ctx, "GetShardIterator", map[string]any{"StreamArn": m.StreamARN, "ShardId": sh.ShardId, "ShardIteratorType": typ}, &it); err != nil {
			log.Warn("stream mapping", "function", m.Function, "err", err)
			continue
		}
		seen[sh.ShardId] = true
		iters[sh.ShardId] = it.ShardIterator
	}
	return true
}

// Failure is a batch Lambda gave up on, and why.
type Failure struct {
	Records   []Record
	Condition string // RetryAttemptsExhausted, RecordAgeExceeded
	Attempts  int
}

// Process hands a batch to the function as Lambda does and returns what it
// gave up on: records that match no filter are dropped; a function error
// retries the batch (split in halves with Bisect) up to MaxRetries times;
// a partial batch response retries from the first failed sequence number;
// records older than MaxRecordAge are given up.
func (m StreamMapping) Process(ctx context.Context, batch []Record, invoke Invoke, now func() time.Time) []Failure {
	var kept []Record
	for _, r := range batch {
		raw, _ := json.Marshal(r.Raw)
		if MatchAny(m.Filters, raw) {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return m.attempt(ctx, kept, 0, invoke, now)
}

func (m StreamMapping) attempt(ctx context.Context, batch []Record, attempts int, invoke Invoke, now func() time.Time) []Failure {
	if ctx.Err() != nil || len(batch) == 0 {
		return nil
	}
	if m.MaxRecordAge > 0 {
		var fresh, old []Record
		for _, r := range batch {
			if !r.Created.IsZero() && now().Sub(r.Created) > m.MaxRecordAge {
				old = append(old, r)
			} else {
				fresh = append(fresh, r)
			}
		}
		if len(old) > 0 {
			return append([]Failure{{Records: old, Condition: "RecordAgeExceeded", Attempts: attempts}}, m.attempt(ctx, fresh, attempts, invoke, now)...)
		}
	}
	recs := make([]map[string]any, len(batch))
	for i, r := range batch {
		recs[i] = r.Raw
	}
	payload, _ := json.Marshal(map[string]any{"Records": recs})
	if last := batch[len(batch)-1]; m.IteratorAge != nil && !last.Created.IsZero() {
		m.IteratorAge(max(0, now().Sub(last.Created)))
	}
	out, fnErr, err := invoke(ctx, m.Function, payload)
	failedAt := -1
	if err == nil && !fnErr {
		if !m.ReportFailures {
			return nil
		}
		failed, ok := batchItemFailures(out)
		if ok && len(failed) == 0 {
			return nil
		}
		for i, r := range batch {
			if failed[r.Sequence] {
				failedAt = i
				break
			}
		}
		if ok && failedAt < 0 { // an identifier not in the batch: the whole batch failed
			failedAt = 0
		}
		if !ok {
			failedAt = 0
		}
	}
	if m.MaxRetries >= 0 && attempts >= m.MaxRetries {
		if failedAt < 0 {
			failedAt = 0
		}
		return []Failure{{Records: batch[failedAt:], Condition: "RetryAttemptsExhausted", Attempts: attempts + 1}}
	}
	if failedAt >= 0 { // a partial batch response: retry from the first failure
		return m.attempt(ctx, batch[failedAt:], attempts+1, invoke, now)
	}
	if m.Bisect && len(batch) > 1 {
		half := len(batch) / 2
		return append(m.attempt(ctx, batch[:half], attempts+1, invoke, now), m.attempt(ctx, batch[half:], attempts+1, invoke, now)...)
	}
	return m.attempt(ctx, batch, attempts+1, invoke, now)
}

// sendFailure sends the on-failure record Lambda sends for a stream
// batch: the shard's range of sequence numbers, not the records.
func (m StreamMapping) sendFailure(ctx context.Context, q *sqs.Client, f Failure, log *slog.Logger) {
	log.Error("stream batch given up", "function", m.Function, "condition", f.Condition, "records", len(f.Records), "attempts", f.Attempts)
	if m.OnFailureQueue == "" || q == nil || len(f.Records) == 0 {
		return
	}
	body, _ := json.Marshal(map[string]any{
		"requestContext":  map[string]any{"condition": f.Condition, "approximateInvokeCount": f.Attempts, "functionArn": m.Function},
		"responseContext": map[string]any{"statusCode": 200, "functionError": "Unhandled"},
		"version":         "1.0",
		"timestamp":       time.Now().UTC().Format(time.RFC3339Nano),
		"DDBStreamBatchInfo": map[string]any{
			"streamArn": m.StreamARN, "batchSize": len(f.Records),
			"startSequenceNumber": f.Records[0].Sequence, "endSequenceNumber": f.Records[len(f.Records)-1].Sequence,
		},
	})
	s := string(body)
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &m.OnFailureQueue, MessageBody: &s}); err != nil {
		log.Error("on-failure destination", "function", m.Function, "err", err)
	}
}
