package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/platform/queue"
)

func TestEncodeDecode(t *testing.T) {
	due := time.Date(2026, 5, 1, 10, 0, 0, 123_000_000, time.UTC)
	for _, m := range []queue.Message{msg("a", 1), func() queue.Message { m := msg("b", 6); m.NotBefore = due; return m }()} {
		b, err := queue.Encode(m)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		got, err := queue.Decode(b)
		if err != nil {
			t.Fatalf("Decode(%s): %v", b, err)
		}
		sameTime := got.NotBefore.Equal(m.NotBefore)
		got.NotBefore = m.NotBefore
		if got != m || !sameTime {
			t.Errorf("round trip of %s: want %+v, got %+v", b, m, got)
		}
	}
	b, _ := queue.Encode(msg("a", 1))
	var raw map[string]any
	_ = json.Unmarshal(b, &raw)
	if _, ok := raw["not_before"]; ok {
		t.Errorf("an unset NotBefore is encoded: %s", b)
	}
}

func TestDecodeRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"empty":         ``,
		"not JSON":      `hello`,
		"array":         `[1]`,
		"no delivery":   `{"account_id":"a","endpoint_id":"e","event_id":"v","attempt":1}`,
		"attempt 0":     `{"account_id":"a","endpoint_id":"e","event_id":"v","delivery_id":"d","attempt":0}`,
		"attempt text":  `{"account_id":"a","endpoint_id":"e","event_id":"v","delivery_id":"d","attempt":"1"}`,
		"trailing data": `{"account_id":"a","endpoint_id":"e","event_id":"v","delivery_id":"d","attempt":1} {}`,
		"bad time":      `{"account_id":"a","endpoint_id":"e","event_id":"v","delivery_id":"d","attempt":1,"not_before":"soon"}`,
	} {
		if _, err := queue.Decode([]byte(body)); !errors.Is(err, queue.ErrMalformed) {
			t.Errorf("%s: want ErrMalformed, got %v", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := queue.Encode(msg("a", 2))
	f.Add(good)
	f.Add([]byte(`{"attempt":-1}`))
	f.Add([]byte(`{"account_id":"a","endpoint_id":"e","event_id":"v","delivery_id":"d","attempt":1,"not_before":"2026-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := queue.Decode(body)
		if err != nil {
			if !errors.Is(err, queue.ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		again, err := queue.Encode(m)
		if err != nil {
			t.Fatalf("a decoded message does not encode: %v", err)
		}
		if _, err := queue.Decode(again); err != nil {
			t.Fatalf("re-encoded message does not decode: %v", err)
		}
	})
}

func TestRemaining(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		notBefore time.Time
		want      time.Duration
	}{
		{time.Time{}, 0},
		{now.Add(-time.Hour), 0},
		{now.Add(queue.Early / 2), 0},
		{now.Add(45 * time.Minute), 45 * time.Minute},
	} {
		m := msg("a", 1)
		m.NotBefore = tc.notBefore
		if got := m.Remaining(now); got != tc.want {
			t.Errorf("Remaining with NotBefore %v: want %v, got %v", tc.notBefore, tc.want, got)
		}
	}
}

// fakeSQS records SendMessage calls.
type fakeSQS struct {
	queue.SQSAPI
	sent []*sqs.SendMessageInput
	err  error
}

func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.sent = append(f.sent, in)
	return &sqs.SendMessageOutput{}, f.err
}

func TestSQSSendDelays(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		delay     time.Duration
		wantDelay int32
		notBefore time.Time
	}{
		{0, 0, time.Time{}},
		{-time.Second, 0, time.Time{}},
		{1500 * time.Millisecond, 2, time.Time{}}, // rounded up: never early
		{time.Minute, 60, time.Time{}},
		{queue.MaxSQSDelay, 900, time.Time{}},
		{time.Hour, 900, now.Add(time.Hour)},
		{4*time.Hour + 6*time.Minute, 900, now.Add(4*time.Hour + 6*time.Minute)},
	} {
		f := &fakeSQS{}
		q := queue.NewSQS(f, "https://sqs.example/q")
		q.Now = func() time.Time { return now }
		if err := q.Send(t.Context(), msg("a", 5), tc.delay); err != nil {
			t.Fatalf("Send(%v): %v", tc.delay, err)
		}
		in := f.sent[0]
		if in.DelaySeconds != tc.wantDelay || aws.ToString(in.QueueUrl) != "https://sqs.example/q" {
			t.Errorf("Send(%v): DelaySeconds %d to %s, want %d", tc.delay, in.DelaySeconds, aws.ToString(in.QueueUrl), tc.wantDelay)
		}
		m, err := queue.Decode([]byte(aws.ToString(in.MessageBody)))
		if err != nil {
			t.Fatalf("body: %v", err)
		}
		if !m.NotBefore.Equal(tc.notBefore) {
			t.Errorf("Send(%v): NotBefore %v, want %v", tc.delay, m.NotBefore, tc.notBefore)
		}
	}
	f := &fakeSQS{err: errors.New("throttled")}
	if err := queue.NewSQS(f, "u").Send(t.Context(), msg("a", 1), 0); err == nil {
		t.Error("Send hid the client's error")
	}
}
