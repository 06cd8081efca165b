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
)

// queueResources are the delivery queue and its dead-letter queue.
type queueResources struct {
	delivery awssqs.Queue
	dlq      awssqs.Queue
}

// newDeliveryQueue creates the webhook delivery queue and its DLQ.
func newDeliveryQueue(stack awscdk.Stack) queueResources {
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
		lambdas[f.Name].AddEventSource(awslambdaeventsources.NewSqsEventSource(q.delivery, &awslambdaeventsources.SqsEventSourceProps{
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
