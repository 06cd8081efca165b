package queue_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// sqsClient returns a client of the emulator's SQS (awstest).
func sqsClient(t *testing.T) *sqs.Client { return awstest.SQS(t) }

// testQueues are a queue and its dead-letter queue, as the stack has them
// but with a short visibility timeout.
type testQueues struct {
	url, dlqURL string
}

// newQueues creates a queue whose messages move to a fresh DLQ after
// maxReceives receives, and deletes both when the test ends.
func newQueues(t *testing.T, c *sqs.Client, visibility time.Duration, maxReceives int) testQueues {
	t.Helper()
	spec := queue.QueueSpec{Name: "test-" + strings.ToLower(voiceops.RandomBase62(10)), Visibility: visibility, MaxReceives: maxReceives}
	url, dlqURL, err := queue.CreateQueues(t.Context(), c, spec)
	if err != nil {
		t.Fatalf("CreateQueues: %v", err)
	}
	t.Cleanup(func() {
		for _, u := range []string{url, dlqURL} {
			if _, err := c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)}); err != nil {
				t.Logf("DeleteQueue: %v", err)
			}
		}
	})
	// Idempotent: the dev server runs it at every start.
	if again, _, err := queue.CreateQueues(t.Context(), c, spec); err != nil || again != url {
		t.Fatalf("CreateQueues again: %q, %v; want %q", again, err, url)
	}
	return testQueues{url: url, dlqURL: dlqURL}
}

// receive long-polls url for up to wait and returns what arrived.
func receive(t *testing.T, c *sqs.Client, url string, wait time.Duration) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: int32(wait / time.Second),
	})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

// batches is a BatchHandler that records every record and fails those
// fail says to, recording every receive of a delivery.
type batches struct {
	mu       sync.Mutex
	receives map[string][]time.Time
	counts   map[string]string // ApproximateReceiveCount of the last receive
	fail     func(m queue.Message, receive int) bool
	resend   *queue.SQS // re-sends early messages, as the dispatcher does
	handled  chan string
}

func newBatches(fail func(queue.Message, int) bool) *batches {
	return &batches{receives: map[string][]time.Time{}, counts: map[string]string{}, fail: fail, handled: make(chan string, 100)}
}

func (b *batches) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, r := range ev.Records {
		m, err := queue.Decode([]byte(r.Body))
		if err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			continue
		}
		if b.resend != nil {
			if d := m.Remaining(time.Now()); d > 0 {
				if err := b.resend.Send(ctx, m, d); err != nil {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
				}
				continue
			}
		}
		b.mu.Lock()
		b.receives[m.DeliveryID] = append(b.receives[m.DeliveryID], time.Now())
		b.counts[m.DeliveryID] = r.Attributes["ApproximateReceiveCount"]
		n := len(b.receives[m.DeliveryID])
		b.mu.Unlock()
		if b.fail != nil && b.fail(m, n) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		} else {
			b.handled <- m.DeliveryID
		}
	}
	return resp, nil
}

func (b *batches) times(deliveryID string) []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.receives[deliveryID]...)
}

// consume runs q.Consume until the test ends.
func consume(t *testing.T, q *queue.SQS, h queue.BatchHandler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Consume(ctx, h, queue.ConsumeOptions{Wait: time.Second, OnError: func(err error) { t.Logf("consume: %v", err) }})
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func waitHandled(t *testing.T, b *batches, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	deadline := time.After(20 * time.Second)
	for len(want) > 0 {
		select {
		case id := <-b.handled:
			delete(want, id)
		case <-deadline:
			t.Fatalf("not handled within 20s: %v", want)
		}
	}
}

func TestSQSDelay(t *testing.T) {
	t.Parallel()
	c := sqsClient(t)
	qs := newQueues(t, c, 2*time.Second, 5)
	q := queue.NewSQS(c, qs.url)
	sent := time.Now()
	if err := q.Send(t.Context(), msg("delayed", 1), 2*time.Second); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := receive(t, c, qs.url, time.Second); len(got) != 0 {
		t.Fatalf("a message delayed 2s was received after %v", time.Since(sent))
	}
	var got []types.Message
	for time.Since(sent) < 10*time.Second && len(got) == 0 {
		got = receive(t, c, qs.url, time.Second)
	}
	if len(got) != 1 {
		t.Fatalf("the delayed message never arrived")
	}
	if d := time.Since(sent); d < time.Second {
		t.Errorf("received after %v, before its delay", d)
	}
	m, err := queue.Decode([]byte(aws.ToString(got[0].Body)))
	if err != nil || m.DeliveryID != "dlv_delayed" {
		t.Errorf("received %v (%v)", m, err)
	}
}

// TestSQSNotBefore: a message back from its last 15-minute hop with time
// still to wait (NotBefore ahead) goes back to the queue for the rest and
// is handled once, when due.
func TestSQSNotBefore(t *testing.T) {
	t.Parallel()
	c := sqsClient(t)
	qs := newQueues(t, c, 2*time.Second, 5)
	q := queue.NewSQS(c, qs.url)
	b := newBatches(nil)
	b.resend = q
	m := msg("hop", 6)
	m.NotBefore = time.Now().Add(2500 * time.Millisecond)
	if err := q.Send(t.Context(), m, 0); err != nil {
		t.Fatalf("Send: %v", err)
	}
	consume(t, q, b.handle)
	waitHandled(t, b, "dlv_hop")
	at := b.times("dlv_hop")
	if len(at) != 1 {
		t.Fatalf("handled %d times, want once", len(at))
	}
	if at[0].Before(m.NotBefore.Add(-queue.Early)) {
		t.Errorf("handled %v before it was due", m.NotBefore.Sub(at[0]))
	}
}

// TestSQSPartialBatchFailure: of one batch, only the record reported failed
// comes back, after the visibility timeout.
func TestSQSPartialBatchFailure(t *testing.T) {
	t.Parallel()
	c := sqsClient(t)
	qs := newQueues(t, c, time.Second, 5)
	q := queue.NewSQS(c, qs.url)
	b := newBatches(func(m queue.Message, receive int) bool { return m.DeliveryID == "dlv_b" && receive == 1 })
	for _, id := range []string{"a", "b", "c"} {
		if err := q.Send(t.Context(), msg(id, 1), 0); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	consume(t, q, b.handle)
	waitHandled(t, b, "dlv_a", "dlv_b", "dlv_c")
	time.Sleep(1500 * time.Millisecond) // past the visibility timeout: nothing else comes back
	for id, want := range map[string]int{"dlv_a": 1, "dlv_b": 2, "dlv_c": 1} {
		if got := len(b.times(id)); got != want {
			t.Errorf("%s received %d times, want %d", id, got, want)
		}
	}
	if at := b.times("dlv_b"); len(at) == 2 && at[1].Sub(at[0]) < 500*time.Millisecond {
		t.Errorf("the failed record came back after %v, before the visibility timeout", at[1].Sub(at[0]))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.counts["dlv_b"] != "2" {
		t.Errorf("ApproximateReceiveCount of the second receive: %q, want 2", b.counts["dlv_b"])
	}
}

// TestSQSRedriveToDLQ: a record that keeps failing is received
// maxReceiveCount times, then moves to the dead-letter queue.
func TestSQSRedriveToDLQ(t *testing.T) {
	t.Parallel()
	c := sqsClient(t)
	const maxReceives = 2
	qs := newQueues(t, c, time.Second, maxReceives)
	q := queue.NewSQS(c, qs.url)
	b := newBatches(func(m queue.Message, _ int) bool { return m.DeliveryID == "dlv_poison" })
	if err := q.Send(t.Context(), msg("poison", 1), 0); err != nil {
		t.Fatalf("Send: %v", err)
	}
	consume(t, q, b.handle)
	var dead []types.Message
	for start := time.Now(); len(dead) == 0 && time.Since(start) < 20*time.Second; {
		dead = receive(t, c, qs.dlqURL, time.Second)
	}
	if len(dead) != 1 {
		t.Fatalf("nothing reached the dead-letter queue")
	}
	m, err := queue.Decode([]byte(aws.ToString(dead[0].Body)))
	if err != nil || m.DeliveryID != "dlv_poison" {
		t.Errorf("dead letter: %+v (%v)", m, err)
	}
	if got := len(b.times("dlv_poison")); got != maxReceives {
		t.Errorf("received %d times before the redrive, want %d", got, maxReceives)
	}
}
