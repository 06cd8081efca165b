package queue

import (
	"context"
	"errors"
	"sync"
	"time"
)

// MemoryOptions tune the in-process queue. Zero values take the defaults.
type MemoryOptions struct {
	// Visibility is how long a message whose handler failed waits before it
	// is received again, like SQS's visibility timeout. Default 5 s.
	Visibility time.Duration
	// MaxReceives is how many times a message is received before a failure
	// moves it to the dead letters, like a redrive policy's
	// maxReceiveCount. Default 5.
	MaxReceives int
	// Concurrency bounds the handler calls running at once. Default 16.
	Concurrency int
	// Timeout bounds each handler call's context; 0: none.
	Timeout time.Duration
	// OnDeadLetter, if set, hears each message moved to the dead letters
	// and the last error of its handler.
	OnDeadLetter func(Message, error)
}

// ErrClosed is returned by Send after Close.
var ErrClosed = errors.New("queue: closed")

// Memory is the in-process queue of the dev server. Like SQS it delivers
// at least once: a message is handed to the handler when its delay has
// passed, and handed again after Visibility while the handler returns an
// error, up to MaxReceives times; then it is a dead letter. Messages live
// in this process only, so whatever is still waiting at Close or exit is
// gone (the dev server's in-memory stores are gone too).
type Memory struct {
	handler func(context.Context, Message) error
	opts    MemoryOptions
	sem     chan struct{}

	mu       sync.Mutex
	closed   bool
	waiting  map[*memEntry]struct{} // delayed, not yet handed out
	inFlight sync.WaitGroup
	running  int
	dead     []Message
}

type memEntry struct {
	m        Message
	receives int // how many times it has been handed out before
	timer    *time.Timer
}

var _ Queue = (*Memory)(nil)

// NewMemory returns a running in-process queue that hands every message to
// handler, from its own goroutines.
func NewMemory(handler func(context.Context, Message) error, opts MemoryOptions) *Memory {
	if opts.Visibility <= 0 {
		opts.Visibility = 5 * time.Second
	}
	if opts.MaxReceives <= 0 {
		opts.MaxReceives = 5
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 16
	}
	return &Memory{
		handler: handler, opts: opts, sem: make(chan struct{}, opts.Concurrency),
		waiting: map[*memEntry]struct{}{},
	}
}

// Send queues m for delivery after delay. There is no maximum delay, so
// m.NotBefore is left as it is.
func (q *Memory) Send(ctx context.Context, m Message, delay time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.validate(); err != nil {
		return err
	}
	return q.schedule(&memEntry{m: m}, delay)
}

func (q *Memory) schedule(e *memEntry, delay time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	q.waiting[e] = struct{}{}
	e.timer = time.AfterFunc(max(delay, 0), func() { q.fire(e) })
	return nil
}

// fire hands a due message to the handler.
func (q *Memory) fire(e *memEntry) {
	q.mu.Lock()
	if _, ok := q.waiting[e]; !ok || q.closed {
		q.mu.Unlock()
		return
	}
	delete(q.waiting, e)
	q.inFlight.Add(1)
	q.running++
	q.mu.Unlock()

	go func() {
		defer func() {
			q.mu.Lock()
			q.running--
			q.mu.Unlock()
			q.inFlight.Done()
		}()
		q.sem <- struct{}{}
		defer func() { <-q.sem }()
		e.receives++
		err := q.call(e.m)
		if err == nil {
			return
		}
		if e.receives >= q.opts.MaxReceives {
			q.mu.Lock()
			q.dead = append(q.dead, e.m)
			q.mu.Unlock()
			if q.opts.OnDeadLetter != nil {
				q.opts.OnDeadLetter(e.m, err)
			}
			return
		}
		// Received again after the visibility timeout; dropped if closed,
		// as an SQS message is when its queue is deleted.
		_ = q.schedule(e, q.opts.Visibility)
	}()
}

// call runs the handler; a panic counts as a failed receive.
func (q *Memory) call(m Message) (err error) {
	ctx := context.Background()
	if q.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.opts.Timeout)
		defer cancel()
	}
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("queue: handler panicked")
		}
	}()
	return q.handler(ctx, m)
}

// Len returns how many messages are waiting or being handled.
func (q *Memory) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting) + q.running
}

// Drain waits until no message is waiting or being handled (messages that
// handlers send meanwhile included), or until ctx ends. Check copies still
// waiting for their delay do not count: each judges a claim made by a
// handler of this queue, which has returned by then (its result recorded,
// or its message waiting again), so they can only drop.
func (q *Memory) Drain(ctx context.Context) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for q.pending() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// pending returns how many messages other than waiting check copies are
// waiting or being handled.
func (q *Memory) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.running
	for e := range q.waiting {
		if !e.m.Check {
			n++
		}
	}
	return n
}

// DeadLetters returns the messages that failed MaxReceives times.
func (q *Memory) DeadLetters() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]Message(nil), q.dead...)
}

// Close stops accepting messages, drops the ones still waiting for their
// delay, and waits for the handler calls in flight to return.
func (q *Memory) Close() {
	q.mu.Lock()
	q.closed = true
	for e := range q.waiting {
		e.timer.Stop()
	}
	clear(q.waiting)
	q.mu.Unlock()
	q.inFlight.Wait()
}
