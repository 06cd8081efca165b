package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SendAPI is the one SQS call a Sender makes: *sqs.Client implements it.
type SendAPI interface {
	SendMessage(ctx context.Context, params *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

var _ SendAPI = (*sqs.Client)(nil)

// Sender sends payloads of one type, as JSON, to one SQS queue. It is the
// one sender of every queue: webhook deliveries (Message, through SQS),
// dial jobs (shared/calls/dialer) and the evaluator's rule shards, so that they
// all round delays the same way (DelaySeconds).
type Sender[T any] struct {
	client SendAPI
	url    string
	encode func(T) ([]byte, error)
}

// NewSender returns a sender of JSON-encoded T to the queue at url; it
// never builds a client itself.
func NewSender[T any](client SendAPI, url string) *Sender[T] {
	return NewSenderWith(client, url, func(v T) ([]byte, error) { return json.Marshal(v) })
}

// NewSenderWith is NewSender with the payload's own encoder (one that
// also validates, like Encode).
func NewSenderWith[T any](client SendAPI, url string, encode func(T) ([]byte, error)) *Sender[T] {
	return &Sender[T]{client: client, url: url, encode: encode}
}

// Send sends v to be received after delay, rounded by DelaySeconds. A
// payload that must wait longer than MaxSQSDelay carries when it is due
// itself (as Message.NotBefore and DialJob's slot and deadline do) and is
// sent again by its receiver.
func (s *Sender[T]) Send(ctx context.Context, v T, delay time.Duration) error {
	body, err := s.encode(v)
	if err != nil {
		return err
	}
	_, err = s.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: &s.url, MessageBody: aws.String(string(body)), DelaySeconds: DelaySeconds(delay),
	})
	if err != nil {
		return fmt.Errorf("queue: SendMessage: %w", err)
	}
	return nil
}

// DelaySeconds is the one rounding rule of every queue's delays: whole
// seconds rounded up, so that a message never arrives before it is due
// (receivers treat a message up to Early before its time as due), and
// clamped to SQS's range, 0 to MaxSQSDelay.
func DelaySeconds(d time.Duration) int32 {
	d = min(max(d, 0), MaxSQSDelay)
	return int32((d + time.Second - 1) / time.Second)
}
