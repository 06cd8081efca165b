// Package queue carries webhook delivery attempts from the code that decides
// them (fan-out, retries) to the dispatcher that makes them. Two
// implementations share one interface: SQS for deployed stacks (and moto or
// LocalStack), and an in-process queue for the dev server and tests that
// behaves like SQS where it matters here: delays, at-least-once delivery,
// re-delivery after a failed receive, and a dead-letter list.
//
// A message names an attempt, never carries a body or a secret: the
// dispatcher reads the delivery, the endpoint and the event when the
// attempt is due, so a disabled or deleted endpoint gets nothing more and a
// rotated secret is used at once.
package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Message asks for one attempt of one delivery.
type Message struct {
	AccountID  string `json:"account_id"`
	EndpointID string `json:"endpoint_id"`
	EventID    string `json:"event_id"`
	DeliveryID string `json:"delivery_id"`
	// Attempt is the attempt to make, 1-based.
	Attempt int `json:"attempt"`
	// NotBefore, when set, is when the attempt is due: a message that
	// arrives earlier goes back to the queue for the rest of its wait. SQS
	// delays a message at most MaxSQSDelay, so longer waits travel in
	// several hops.
	NotBefore time.Time `json:"not_before,omitzero"`
	// Manual marks an attempt asked for by a user (the retry endpoint): it
	// is one attempt, never followed by scheduled retries.
	Manual bool `json:"manual,omitempty"`
	// Check marks the copy a dispatcher queues for itself before claiming
	// the attempt, due when its claim's lease ends: it takes the claim over
	// if its claimer died, and otherwise drops. It never makes an attempt.
	Check bool `json:"check,omitempty"`
}

// Queue sends messages.
type Queue interface {
	// Send queues m to be received after delay (0: at once). Delays longer
	// than the implementation's maximum set m.NotBefore and are served in
	// several hops; receivers re-send early messages (Remaining).
	Send(ctx context.Context, m Message, delay time.Duration) error
}

// MaxSQSDelay is the longest delay SQS gives one message.
const MaxSQSDelay = 15 * time.Minute

// Early is how much sooner than NotBefore a message may arrive and still
// count as due: SQS delays are whole seconds, and clocks differ a little.
const Early = time.Second

// Remaining returns how long a received message must still wait: 0 when it
// is due (NotBefore unset, passed, or less than Early away).
func (m Message) Remaining(now time.Time) time.Duration {
	if m.NotBefore.IsZero() {
		return 0
	}
	d := m.NotBefore.Sub(now)
	if d < Early {
		return 0
	}
	return d
}

// Encode returns the JSON body of m.
func Encode(m Message) ([]byte, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// ErrMalformed wraps every reason Decode refuses a body.
var ErrMalformed = errors.New("queue: malformed message")

// MaxBody bounds a message body; real ones are a few hundred bytes.
const MaxBody = 4 << 10

// Decode reads a message body written by Encode. It refuses bodies that are
// not one JSON object with every field of a message, so a stray or damaged
// message is reported, not acted on.
func Decode(body []byte) (Message, error) {
	if len(body) > MaxBody {
		return Message{}, fmt.Errorf("%w: %d bytes", ErrMalformed, len(body))
	}
	var m Message
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return Message{}, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return Message{}, fmt.Errorf("%w: data after the object", ErrMalformed)
	}
	if err := m.validate(); err != nil {
		return Message{}, err
	}
	return m, nil
}

func (m Message) validate() error {
	switch {
	case m.AccountID == "", m.EndpointID == "", m.EventID == "", m.DeliveryID == "":
		return fmt.Errorf("%w: account_id, endpoint_id, event_id and delivery_id are required", ErrMalformed)
	case m.Attempt < 1:
		return fmt.Errorf("%w: attempt %d, want 1 or more", ErrMalformed, m.Attempt)
	}
	return nil
}
