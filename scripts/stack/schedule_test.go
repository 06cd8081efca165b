package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// TestCompressedScheduleSkipsWhileItsQueueHoldsMessages: with time
// compressed, a firing whose target's queue (on moto) still holds a
// message is skipped, and the next after the queue emptied goes through;
// at the rules' own rates every firing goes through; paused, none does.
func TestCompressedScheduleSkipsWhileItsQueueHoldsMessages(t *testing.T) {
	ctx := context.Background()
	q := awstest.SQS(t)
	created, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprint("shards-", time.Now().UnixNano()))})
	if err != nil {
		t.Fatal(err)
	}
	mappings := []esm.SQSMapping{{Function: "evaluator", QueueURL: *created.QueueUrl}}
	waiting := func(ctx context.Context, fn string) int { return queuedFor(ctx, q, mappings, fn) }
	var fired []string
	invoke := func(_ context.Context, fn string, _ []byte) { fired = append(fired, fn) }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	paused := false
	compressed := scheduledFirings(func() bool { return paused }, true, waiting, invoke, log)
	atRate := scheduledFirings(func() bool { return paused }, false, waiting, invoke, log)

	compressed(ctx, "evaluator", nil) // empty queue: fires
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: created.QueueUrl, MessageBody: aws.String("shard 0")}); err != nil {
		t.Fatal(err)
	}
	compressed(ctx, "evaluator", nil) // a message waits: skipped
	compressed(ctx, "sweeper", nil)   // no queue of its own: fires
	atRate(ctx, "evaluator", nil)     // at the rules' rates: fires
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: created.QueueUrl, MaxNumberOfMessages: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("receive: %v, %d messages", err, len(out.Messages))
	}
	if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: created.QueueUrl, ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	compressed(ctx, "evaluator", nil) // emptied: fires again
	paused = true
	compressed(ctx, "evaluator", nil)
	atRate(ctx, "evaluator", nil)
	want := []string{"evaluator", "sweeper", "evaluator", "evaluator"}
	if fmt.Sprint(fired) != fmt.Sprint(want) {
		t.Errorf("fired %v, want %v", fired, want)
	}
}
