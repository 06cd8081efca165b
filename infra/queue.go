package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

const (
	// DispatcherTimeout is the longest timeout a consumer of the delivery
	// queue may have (validateFunctions enforces it). The queue's visibility
	// timeout is six times this, as AWS recommends for SQS event sources, so
	// a message is never redelivered while a batch is still being handled.
	DispatcherTimeout = 60 * time.Second
	// deliveryVisibilityTimeout is the delivery queue's visibility timeout.
	deliveryVisibilityTimeout = 6 * DispatcherTimeout
	// maxReceiveCount is how many receives a delivery message gets before
	// it moves to the dead-letter queue. Retry delays live in the messages
	// (the dispatcher re-enqueues with a delay), so these receives count
	// crashes of the dispatcher itself, not failed HTTP attempts.
	maxReceiveCount = 5
	// dlqRetention keeps dead letters as long as SQS allows.
	dlqRetention = 14 * 24 * time.Hour

	// DialerTimeout is the longest timeout a consumer of the outbound
	// queue may have; its visibility timeout is six times this. A dialer
	// waits in process at most a few seconds for a slot (dialer.DefaultMaxWait)
	// and then calls Twilio (10 s timeout, up to 3 tries).
	DialerTimeout = 60 * time.Second
	// outboundVisibilityTimeout is the outbound queue's visibility timeout.
	outboundVisibilityTimeout = 6 * DialerTimeout
)

// consumerTimeout is the longest timeout of a consumer of the delivery
// queue, or of the outbound queue.
func consumerTimeout(outbound bool) (time.Duration, string) {
	if outbound {
		return DialerTimeout, "DialerTimeout"
	}
	return DispatcherTimeout, "DispatcherTimeout"
}

// queueResources are the delivery queue and the outbound queue (dial
// jobs), each with its dead-letter queue.
type queueResources struct {
	delivery    awssqs.Queue
	dlq         awssqs.Queue
	outbound    awssqs.Queue
	outboundDLQ awssqs.Queue
}

// newOutboundQueue adds the outbound queue of dial jobs and its DLQ. On a
// job's last receive (maxReceiveCount, dialer.DefaultMaxReceives) a failing
// dialer ends its call as failure; a job whose call it could not even end
// is a dead letter, and the OutboundDLQNotEmpty alarm fires.
func newOutboundQueue(stack awscdk.Stack, cfg StackConfig, q *queueResources) {
	q.outboundDLQ = awssqs.NewQueue(stack, jsii.String("OutboundDLQ"), &awssqs.QueueProps{
		RetentionPeriod: seconds(dlqRetention),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	q.outbound = awssqs.NewQueue(stack, jsii.String("OutboundQueue"), &awssqs.QueueProps{
		VisibilityTimeout: seconds(outboundVisibilityTimeout),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           q.outboundDLQ,
			MaxReceiveCount: jsii.Number(maxReceiveCount),
		},
	})
	awscdk.NewCfnOutput(stack, jsii.String("OutboundDLQUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("Dead-letter queue of the outbound dial jobs"),
		Value:       q.outboundDLQ.QueueUrl(),
	})
	retainAsTables(cfg, q.outbound, q.outboundDLQ)
}

// retainAsTables gives queues the tables' removal policy: their messages
// are deliveries and dials not yet made, and dead letters to inspect.
func retainAsTables(cfg StackConfig, qs ...awssqs.Queue) {
	for _, q := range qs {
		q.ApplyRemovalPolicy(cfg.removalPolicy())
	}
}

// newDeliveryQueue creates the webhook delivery queue and its DLQ.
func newDeliveryQueue(stack awscdk.Stack, cfg StackConfig) queueResources {
	dlq := awssqs.NewQueue(stack, jsii.String("DeliveryDLQ"), &awssqs.QueueProps{
		RetentionPeriod: seconds(dlqRetention),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
	})
	q := awssqs.NewQueue(stack, jsii.String("DeliveryQueue"), &awssqs.QueueProps{
		VisibilityTimeout: seconds(deliveryVisibilityTimeout),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(maxReceiveCount),
		},
	})
	awscdk.NewCfnOutput(stack, jsii.String("DeliveryQueueUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("SQS queue of webhook deliveries"),
		Value:       q.QueueUrl(),
	})
	awscdk.NewCfnOutput(stack, jsii.String("DeliveryDLQUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("Dead-letter queue of the webhook deliveries"),
		Value:       dlq.QueueUrl(),
	})
	retainAsTables(cfg, q, dlq)
	return queueResources{delivery: q, dlq: dlq}
}

// addQueueConsumers attaches every function with a Queue trigger to the
// delivery queue. The mapping reports batch item failures, so one failed
// record does not redeliver its whole batch, and caps concurrency so that a
// backlog cannot exhaust the account's Lambda concurrency.
func addQueueConsumers(fns []Function, lambdas map[string]awslambda.Function, q queueResources) {
	for _, f := range fns {
		if f.Queue == nil {
			continue
		}
		source := q.delivery
		if f.Queue.Outbound {
			source = q.outbound
		}
		lambdas[f.Name].AddEventSource(awslambdaeventsources.NewSqsEventSource(source, &awslambdaeventsources.SqsEventSourceProps{
			BatchSize:               jsii.Number(f.Queue.BatchSize),
			MaxConcurrency:          jsii.Number(f.Queue.MaxConcurrency),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
	}
}

// seconds converts a Go duration into a CDK duration.
func seconds(d time.Duration) awscdk.Duration {
	return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
}
