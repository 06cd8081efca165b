package queue_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func TestDelaySeconds(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want int32
	}{
		{-time.Second, 0}, {0, 0}, {time.Nanosecond, 1}, {999 * time.Millisecond, 1}, {time.Second, 1},
		{time.Second + time.Millisecond, 2}, {14*time.Minute + 59*time.Second + 1, 900}, {queue.MaxSQSDelay, 900}, {time.Hour, 900},
	} {
		if got := queue.DelaySeconds(tc.in); got != tc.want {
			t.Errorf("DelaySeconds(%s) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// recording is an SQS client (in process) that keeps what it is sent and,
// when next is set, passes it on.
type recording struct {
	next queue.SendAPI
	mu   sync.Mutex
	sent []*sqs.SendMessageInput
}

func (r *recording) SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	r.mu.Lock()
	r.sent = append(r.sent, in)
	r.mu.Unlock()
	if r.next == nil {
		return &sqs.SendMessageOutput{MessageId: aws.String("m")}, nil
	}
	return r.next.SendMessage(ctx, in, o...)
}

func (r *recording) take() []*sqs.SendMessageInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// payloads sends one of each of the three payloads, through the three
// queues' own senders, to the queues at urls (delivery, outbound, shard).
func payloads(t *testing.T, c queue.SendAPI, urls [3]string, delay time.Duration) [3]string {
	t.Helper()
	ctx := context.Background()
	m := queue.Message{AccountID: "acct_a", EndpointID: "ep_1", EventID: "evt_1", DeliveryID: "dlv_1", Attempt: 2}
	j := voiceops.DialJob{SID: voiceops.NewCallSID(), AccountID: "acct_a", QueuedAt: time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)}
	shard, _ := json.Marshal(evaluator.ShardMessage{Shard: 3, ScheduledAt: j.QueuedAt})
	if err := queue.NewSQS(c.(queue.SQSAPI), urls[0]).Send(ctx, m, delay); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if err := (&dialer.SQSQueue{Client: c, URL: urls[1]}).SendDial(ctx, j, delay); err != nil {
		t.Fatalf("dial job: %v", err)
	}
	if err := queue.NewSender[json.RawMessage](c, urls[2]).Send(ctx, shard, delay); err != nil {
		t.Fatalf("shard: %v", err)
	}
	mb, _ := queue.Encode(m)
	jb, _ := json.Marshal(j)
	return [3]string{string(mb), string(jb), string(shard)}
}

// sqsOnly adds the receive calls queue.NewSQS's client needs to a
// recording client (never called by Send).
type sqsOnly struct {
	*recording
	queue.SQSAPI
}

func (s sqsOnly) SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return s.recording.SendMessage(ctx, in, o...)
}

// TestOneDelayRule: the delivery queue, the outbound (dial) queue and the
// shard queue round a delay the same way (queue.DelaySeconds), in process.
func TestOneDelayRule(t *testing.T) {
	rec := &recording{}
	c := sqsOnly{recording: rec}
	urls := [3]string{"https://sqs/deliveries", "https://sqs/outbound", "https://sqs/shards"}
	for _, delay := range []time.Duration{0, 300 * time.Millisecond, 2500 * time.Millisecond, 3 * time.Second, 20 * time.Minute} {
		bodies := payloads(t, c, urls, delay)
		sent := rec.take()
		if len(sent) != 3 {
			t.Fatalf("delay %s: %d messages sent, want 3", delay, len(sent))
		}
		for i, in := range sent {
			if in.DelaySeconds != queue.DelaySeconds(delay) || aws.ToString(in.QueueUrl) != urls[i] {
				t.Errorf("delay %s, queue %s: DelaySeconds %d to %s, want %d", delay, urls[i], in.DelaySeconds, aws.ToString(in.QueueUrl), queue.DelaySeconds(delay))
			}
			if i > 0 || delay <= queue.MaxSQSDelay { // a long delivery carries NotBefore
				if aws.ToString(in.MessageBody) != bodies[i] {
					t.Errorf("queue %s: body %s, want %s", urls[i], aws.ToString(in.MessageBody), bodies[i])
				}
			}
		}
	}
}

// TestSenderOnSQS: the three payloads through the real SQS API (moto):
// SQS takes every delay the rule gives (0, a part second rounded up, and
// past 15 minutes clamped to 900 s), and what arrives is what was sent.
func TestSenderOnSQS(t *testing.T) {
	c := sqsClient(t)
	var urls [3]string
	for i := range urls {
		urls[i] = newQueues(t, c, 30*time.Second, 5).url
	}
	rec := &recording{next: c}
	client := sqsOnly{recording: rec, SQSAPI: c}
	for _, delay := range []time.Duration{1500 * time.Millisecond, 20 * time.Minute} {
		payloads(t, client, urls, delay)
	}
	for _, in := range rec.take() {
		if in.DelaySeconds != 2 && in.DelaySeconds != 900 {
			t.Errorf("DelaySeconds %d", in.DelaySeconds)
		}
	}
	bodies := payloads(t, client, urls, 0)
	for i, url := range urls {
		got := ""
		for _, m := range receive(t, c, url, time.Second) {
			if b := aws.ToString(m.Body); b == bodies[i] {
				got = b
			}
		}
		if got == "" {
			t.Errorf("queue %d: the undelayed message %s did not arrive", i, bodies[i])
		}
	}
}
