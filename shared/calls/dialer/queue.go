package dialer

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// SQSQueue sends dial jobs to the outbound queue (SQS).
type SQSQueue struct {
	Client queue.SendAPI
	URL    string
}

var _ voiceops.DialQueue = (*SQSQueue)(nil)

// SendDial sends j through the one queue sender (queue.Sender): its delay
// in whole seconds rounded up, at most MaxQueueDelay. The dialer asks for
// whole seconds, and spends the rest of a wait in process.
func (q *SQSQueue) SendDial(ctx context.Context, j voiceops.DialJob, delay time.Duration) error {
	if err := queue.NewSender[voiceops.DialJob](q.Client, q.URL).Send(ctx, j, delay); err != nil {
		return fmt.Errorf("dial queue: %w", err)
	}
	return nil
}

// HandleSQS handles a batch of the outbound queue: every record at once
// (each may wait for its slot), reporting only the failed ones. A record
// that is not a dial job is reported failed, so it ends in the DLQ.
func (d *Dialer) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu   sync.Mutex
		res  events.SQSEventResponse
		wg   sync.WaitGroup
		fail = func(id string, err error) {
			d.Log.Error("dial job failed", "message_id", id, "error", err)
			mu.Lock()
			res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
			mu.Unlock()
		}
	)
	for _, rec := range ev.Records {
		var j voiceops.DialJob
		if err := json.Unmarshal([]byte(rec.Body), &j); err != nil || !voiceops.ValidCallSID(j.SID) || j.AccountID == "" {
			fail(rec.MessageId, fmt.Errorf("not a dial job: %v", err))
			continue
		}
		receives, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := d.Handle(ctx, j)
			if err != nil && receives >= d.maxReceives() {
				// The last receive before the DLQ: end the call as failed
				// rather than leave it queued (or calling) for ever.
				if gerr := d.GiveUp(ctx, j); gerr == nil {
					d.Log.Error("dial job failed on its last receive; the call is failed", "call_sid", j.SID, "error", err)
					return
				}
			}
			if err != nil {
				fail(rec.MessageId, err)
			}
		}()
	}
	wg.Wait()
	return res, nil
}

// MemoryQueue is the dev server's in-process outbound queue: a job is
// handed to the handler when its delay has passed, and again a second
// later while the handler fails, up to 5 times (then logged, given up and
// dropped, like a message moved to a DLQ).
type MemoryQueue struct {
	Handler func(ctx context.Context, j voiceops.DialJob) error
	// GiveUp, when set, is called on the last failed receive (Dialer.GiveUp).
	GiveUp func(ctx context.Context, j voiceops.DialJob) error
	Log    *slog.Logger

	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ voiceops.DialQueue = (*MemoryQueue)(nil)

const memoryReceives = 5

// SendDial schedules j after delay.
func (q *MemoryQueue) SendDial(_ context.Context, j voiceops.DialJob, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx == nil {
		q.ctx, q.cancel = context.WithCancel(context.Background())
	}
	if q.ctx.Err() != nil {
		return fmt.Errorf("dial queue: closed")
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		if SleepContext(q.ctx, delay) != nil {
			return
		}
		for receive := 1; ; receive++ {
			err := q.Handler(q.ctx, j)
			if err == nil || q.ctx.Err() != nil {
				return
			}
			if receive == memoryReceives {
				q.Log.Error("dial job dead-lettered", "call_sid", j.SID, "error", err)
				if q.GiveUp != nil {
					if err := q.GiveUp(q.ctx, j); err != nil {
						q.Log.Error("giving the call up", "call_sid", j.SID, "error", err)
					}
				}
				return
			}
			if SleepContext(q.ctx, time.Second) != nil {
				return
			}
		}
	}()
	return nil
}

// Close stops the queue: waiting jobs are dropped (the dev server's
// in-memory calls are gone with it).
func (q *MemoryQueue) Close() {
	q.mu.Lock()
	if q.ctx == nil {
		q.ctx, q.cancel = context.WithCancel(context.Background())
	}
	q.cancel()
	q.mu.Unlock()
	q.wg.Wait()
}
