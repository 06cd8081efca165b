package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSAPI is the part of the SQS client this package uses, with the SDK's
// own signatures: *sqs.Client implements it.
type SQSAPI interface {
	SendMessage(ctx context.Context, params *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ReceiveMessage(ctx context.Context, params *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, params *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

var _ SQSAPI = (*sqs.Client)(nil)

// SQS sends to one SQS queue, and can drain it the way Lambda's SQS event
// source does (Consume), for the dev server against moto or LocalStack.
type SQS struct {
	client SQSAPI
	url    string
	send   *Sender[Message]
	// Now is the clock of NotBefore; time.Now unless a test sets it.
	Now func() time.Time
}

var _ Queue = (*SQS)(nil)

// NewSQS returns a queue sending to the queue at url with client; it never
// builds a client itself.
func NewSQS(client SQSAPI, url string) *SQS {
	return &SQS{client: client, url: url, send: NewSenderWith(client, url, Encode), Now: time.Now}
}

// Send sends m with its delay rounded by DelaySeconds (up: a message never
// arrives before it is due). A delay above MaxSQSDelay is sent as
// MaxSQSDelay with m.NotBefore set to when the attempt is due; the consumer
// re-sends the message for the rest (Message.Remaining).
func (q *SQS) Send(ctx context.Context, m Message, delay time.Duration) error {
	if delay > MaxSQSDelay {
		m.NotBefore = q.Now().Add(delay)
	}
	return q.send.Send(ctx, m, delay)
}

// BatchHandler handles a batch of SQS records and names the failed ones,
// as a Lambda function with ReportBatchItemFailures does.
type BatchHandler func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// ConsumeOptions tune Consume.
type ConsumeOptions struct {
	// BatchSize is the most records per batch (1 to 10; default 10).
	BatchSize int32
	// Wait is the long-poll time of a receive (0 to 20 s; default 20 s).
	Wait time.Duration
	// OnError, if set, hears receive, handler and delete errors; Consume
	// carries on after them.
	OnError func(error)
}

// Consume receives batches until ctx ends, giving each to h, and behaves
// like Lambda's SQS event source with ReportBatchItemFailures: it deletes
// every record of a batch except those h reports failed, which SQS
// delivers again after the queue's visibility timeout (and moves to the
// dead-letter queue after its maxReceiveCount). When h returns an error, or
// names a record that was not in the batch, the whole batch is left to be
// delivered again. It returns nil when ctx ends.
func (q *SQS) Consume(ctx context.Context, h BatchHandler, opts ConsumeOptions) error {
	size := opts.BatchSize
	if size < 1 || size > 10 {
		size = 10
	}
	wait := int32(20)
	if opts.Wait > 0 {
		wait = int32(math.Ceil(min(opts.Wait, 20*time.Second).Seconds()))
	}
	report := func(err error) {
		if opts.OnError != nil && ctx.Err() == nil {
			opts.OnError(err)
		}
	}
	for ctx.Err() == nil {
		out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &q.url, MaxNumberOfMessages: size, WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			report(fmt.Errorf("queue: ReceiveMessage: %w", err))
			if sleep(ctx, time.Second) != nil {
				break
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := toEvent(out.Messages)
		resp, err := h(ctx, ev)
		if err != nil {
			report(fmt.Errorf("queue: batch handler: %w", err))
			continue
		}
		failed := map[string]bool{}
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		var del []types.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			if failed[id] {
				delete(failed, id)
				continue
			}
			del = append(del, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(failed) > 0 {
			report(errors.New("queue: the batch response names records not in the batch; the whole batch is retried"))
			continue
		}
		if len(del) == 0 {
			continue
		}
		dout, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &q.url, Entries: del})
		switch {
		case err != nil:
			report(fmt.Errorf("queue: DeleteMessageBatch: %w", err))
		case len(dout.Failed) > 0:
			report(fmt.Errorf("queue: DeleteMessageBatch: %d of %d not deleted", len(dout.Failed), len(del)))
		}
	}
	return nil
}

// toEvent builds the event Lambda would pass for these messages.
func toEvent(ms []types.Message) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(ms))}
	for i, m := range ms {
		attrs := make(map[string]string, len(m.Attributes))
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		ev.Records[i] = events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: attrs,
			EventSource: "aws:sqs",
		}
	}
	return ev
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
