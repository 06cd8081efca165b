// Package esm runs the template's event sources as Lambda runs them: SQS
// event source mappings (batch size, batching window, partial batch
// responses; the queue's own visibility timeout and redrive policy on
// moto), the DynamoDB stream mapping (starting position, batch size,
// batching window, filter criteria, bisect on error, retries, maximum
// record age, on-failure destination) and EventBridge schedules.
package esm

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Invoke runs a function synchronously.
type Invoke func(ctx context.Context, function string, payload []byte) (out []byte, functionError bool, err error)

// SQSMapping is one AWS::Lambda::EventSourceMapping of a queue.
type SQSMapping struct {
	Function       string
	QueueURL       string
	QueueARN       string
	Region         string
	BatchSize      int
	Window         time.Duration
	ReportFailures bool // FunctionResponseTypes has ReportBatchItemFailures
	Concurrency    int  // pollers
}

// RunSQS polls the queue until ctx ends, invoking the function with each
// batch and deleting what it handled.
func RunSQS(ctx context.Context, q *sqs.Client, m SQSMapping, invoke Invoke, log *slog.Logger) {
	n := max(1, m.Concurrency)
	done := make(chan struct{}, n)
	for range n {
		go func() {
			defer func() { done <- struct{}{} }()
			for ctx.Err() == nil {
				if err := pollOnce(ctx, q, m, invoke); err != nil && ctx.Err() == nil {
					log.Warn("sqs mapping", "function", m.Function, "queue", m.QueueARN, "err", err)
					sleep(ctx, time.Second)
				}
			}
		}()
	}
	for range n {
		<-done
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func pollOnce(ctx context.Context, q *sqs.Client, m SQSMapping, invoke Invoke) error {
	batch := max(1, m.BatchSize)
	var msgs []sqstypes.Message
	deadline := time.Now().Add(m.Window)
	for len(msgs) < batch {
		wait := int32(1)
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &m.QueueURL, MaxNumberOfMessages: int32(min(10, batch-len(msgs))), WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		if err != nil {
			return err
		}
		msgs = append(msgs, out.Messages...)
		// Without a window Lambda invokes with what one poll returned;
		// with one, it gathers until the batch is full or the window ends.
		if len(msgs) > 0 && (m.Window == 0 || time.Now().After(deadline)) {
			break
		}
		if len(msgs) == 0 {
			deadline = time.Now().Add(m.Window)
			if ctx.Err() != nil {
				return nil
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	records := SQSRecords(msgs, m.QueueARN, m.Region)
	payload, err := json.Marshal(events.SQSEvent{Records: records})
	if err != nil {
		return err
	}
	out, fnErr, err := invoke(ctx, m.Function, payload)
	if err != nil {
		return err
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, r := range Settle(records, out, fnErr, m.ReportFailures) {
		entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r.ReceiptHandle)})
	}
	for len(entries) > 0 {
		k := min(10, len(entries))
		if _, err := q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &m.QueueURL, Entries: entries[:k]}); err != nil {
			return err
		}
		entries = entries[k:]
	}
	return nil
}

// SQSRecords builds the event's records as Lambda does.
func SQSRecords(msgs []sqstypes.Message, queueARN, region string) []events.SQSMessage {
	out := make([]events.SQSMessage, 0, len(msgs))
	for _, m := range msgs {
		r := events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Md5OfBody: aws.ToString(m.MD5OfBody), Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: queueARN, AWSRegion: region,
		}
		if len(m.MessageAttributes) > 0 {
			r.MessageAttributes = map[string]events.SQSMessageAttribute{}
			for k, a := range m.MessageAttributes {
				r.MessageAttributes[k] = events.SQSMessageAttribute{
					StringValue: a.StringValue, BinaryValue: a.BinaryValue, DataType: aws.ToString(a.DataType),
					StringListValues: a.StringListValues, BinaryListValues: a.BinaryListValues,
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// Settle returns the records to delete after an invocation, as Lambda
// decides: none when the function failed; with ReportBatchItemFailures,
// all but the reported ones, and none if the response names an identifier
// that is not in the batch or cannot be read (Lambda then treats the whole
// batch as failed); without it, all.
func Settle(records []events.SQSMessage, out []byte, functionError, reportFailures bool) []events.SQSMessage {
	if functionError {
		return nil
	}
	if !reportFailures {
		return records
	}
	failed, ok := batchItemFailures(out)
	if !ok {
		return nil
	}
	ids := map[string]bool{}
	for _, r := range records {
		ids[r.MessageId] = true
	}
	for id := range failed {
		if !ids[id] {
			return nil
		}
	}
	var del []events.SQSMessage
	for _, r := range records {
		if !failed[r.MessageId] {
			del = append(del, r)
		}
	}
	return del
}

// batchItemFailures reads a partial batch response. An empty or null
// output, or one without batchItemFailures, reports no failure; an item
// without an identifier makes the response invalid.
func batchItemFailures(out []byte) (map[string]bool, bool) {
	failed := map[string]bool{}
	if len(out) == 0 || string(out) == "null" {
		return failed, true
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, false
	}
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == nil || *f.ItemIdentifier == "" {
			return nil, false
		}
		failed[*f.ItemIdentifier] = true
	}
	return failed, true
}
