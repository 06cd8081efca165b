package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The rule evaluator's event sources beside its schedule (docs/alerting.md). The stream's numbers:
const (
	// streamBatchingWindow: none. Lambda polls each shard about four
	// times a second and invokes with what a poll found, so data is
	// evaluated within about 250 ms of being stored plus the invocation
	// (time to notify p99 under a second, docs/performance.md). The
	// coalescing is the poll's: a scope's records all go to one shard and
	// one lane, handled one batch at a time, and a batch evaluates each
	// distinct scope once, so a scope is evaluated at most about four
	// times a second however many writes it gets (docs/alerting.md,
	// "Coalescing"; its cost: docs/cost.md). A window of 1 s (the least
	// above 0) would make that once a second and add up to a second to
	// every notification.
	streamBatchingWindow = 0 * time.Second
	// streamBatchSize bounds the records of one invocation (one evaluation
	// per distinct scope among them). It is DynamoDB Streams' maximum: a
	// stream shard follows one table partition, which takes at most about
	// 1,000 writes a second, so a poll a quarter of a second apart never
	// fills it. KEYS_ONLY records of about 400 bytes keep 10,000 of them
	// under Lambda's 6 MB.
	streamBatchSize = 10_000
	// One bad record must not hold its shard (docs/capacity.md, "The
	// metrics stream"; docs/runbooks/stream-failures.md):
	//
	// streamParallelization: each stream shard is read by this many
	// concurrent batches, records of one scope (partition key) always in
	// the same one, in order. A batch that keeps failing holds up only
	// the scopes of its lane; the other lanes of the shard go on.
	streamParallelization = 5
	// streamRetries: a failing batch is retried twice, halved each time
	// (BisectBatchOnFunctionError; a record the code itself cannot read
	// is reported alone, ReportBatchItemFailures), then its records go
	// to the failure destination. With the handler's own deadline on a
	// stream batch (functions/evaluator: streamBatchDeadline, 10 s), a
	// poison record reaches the destination within three tries, about
	// 30 s at worst and a second or so when it fails fast.
	streamRetries = 2
	// streamMaxRecordAge: records older than a minute go to the failure
	// destination unevaluated. Nothing is lost: the schedule evaluates
	// every rule each minute, so a scope whose record waited that long
	// has been evaluated since. 60 s is Lambda's smallest value.
	streamMaxRecordAge = time.Minute
	// shardMaxReceives is how many times a shard message is tried before
	// it moves to the shard dead-letter queue.
	shardMaxReceives = 3
)

// redriveRetention is the retention of a queue with a dead-letter queue:
// long enough for a message to fail maxReceives times, each failure
// making it wait a visibility timeout, and then be moved to the
// dead-letter queue on its next receive, with a margin for the poller.
// A shorter retention lets a failing message expire before it is retried
// or dead-lettered: its failure would go unseen (no DLQ, no alarm). A
// shard message that is retried late does no harm: its shard is
// evaluated at the current instant.
func redriveRetention(visibility time.Duration, maxReceives int) time.Duration {
	return time.Duration(maxReceives)*visibility + retentionMargin
}

// retentionMargin is redriveRetention's margin beyond the last visibility
// timeout.
const retentionMargin = 5 * time.Minute

// evaluatorResources are the queues the evaluator's sources add; their
// alarms are in alarms.go.
type evaluatorResources struct {
	streamFailures awssqs.Queue // the stream mapping's on-failure destination
	shardQueue     awssqs.Queue
	shardDLQ       awssqs.Queue
}

// addEvaluatorSources attaches the metrics table's stream and the shard
// queue to the functions that ask for them (MetricsStream, ShardFanout).
func addEvaluatorSources(stack awscdk.Stack, cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function, tbls map[string]awsdynamodb.Table) evaluatorResources {
	var res evaluatorResources
	for _, f := range fns {
		fn := lambdas[f.Name]
		if f.MetricsStream {
			// The destination gets, for each batch that kept failing, its
			// shard and sequence numbers: enough to read the records again
			// from the stream (kept 24 h) and replay them.
			res.streamFailures = awssqs.NewQueue(stack, jsii.String("MetricsStreamFailures"), &awssqs.QueueProps{
				RetentionPeriod: seconds(dlqRetention),
				Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
				EnforceSSL:      jsii.Bool(true),
			})
			retainAsTables(cfg, res.streamFailures)
			fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(tbls[tables.Metrics.ID], &awslambdaeventsources.DynamoEventSourceProps{
				StartingPosition:        awslambda.StartingPosition_LATEST,
				BatchSize:               jsii.Number(streamBatchSize),
				MaxBatchingWindow:       seconds(streamBatchingWindow),
				ParallelizationFactor:   jsii.Number(streamParallelization),
				ReportBatchItemFailures: jsii.Bool(true),
				BisectBatchOnError:      jsii.Bool(true),
				RetryAttempts:           jsii.Number(streamRetries),
				MaxRecordAge:            seconds(streamMaxRecordAge),
				OnFailure:               awslambdaeventsources.NewSqsDlq(res.streamFailures),
				// New and changed items (a metric write adds into an item of
				// its minute: shared/store/dynamo/metriclayout.go); TTL deletions
				// change nothing to evaluate.
				Filters: &[]*map[string]any{awslambda.FilterCriteria_Filter(&map[string]any{
					"eventName": awslambda.FilterRule_Or(jsii.String("INSERT"), jsii.String("MODIFY")),
				})},
			}))
			awscdk.NewCfnOutput(stack, jsii.String("MetricsStreamFailuresUrl"), &awscdk.CfnOutputProps{
				Description: jsii.String("Stream batches the evaluator failed on: shard and sequence numbers to replay"),
				Value:       res.streamFailures.QueueUrl(),
			})
		}
		if f.ShardFanout {
			res.shardDLQ = awssqs.NewQueue(stack, jsii.String("EvaluatorShardDLQ"), &awssqs.QueueProps{
				RetentionPeriod: seconds(dlqRetention),
				Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
				EnforceSSL:      jsii.Bool(true),
			})
			visibility := 6 * f.Timeout // AWS's advice for SQS sources
			q := awssqs.NewQueue(stack, jsii.String("EvaluatorShardQueue"), &awssqs.QueueProps{
				VisibilityTimeout: seconds(visibility),
				RetentionPeriod:   seconds(redriveRetention(visibility, shardMaxReceives)),
				Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
				EnforceSSL:        jsii.Bool(true),
				DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: res.shardDLQ, MaxReceiveCount: jsii.Number(shardMaxReceives)},
			})
			res.shardQueue = q
			retainAsTables(cfg, q, res.shardDLQ)
			grantSend(fn, q.QueueArn())                                                 // the schedule's shard messages
			fn.AddEnvironment(jsii.String(lambdamain.ShardQueueEnv), q.QueueUrl(), nil) // its environment names it (envDisagreements)
			fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(q, &awslambdaeventsources.SqsEventSourceProps{
				BatchSize:               jsii.Number(1), // one shard per invocation
				MaxConcurrency:          jsii.Number(voiceops.RuleShards),
				ReportBatchItemFailures: jsii.Bool(true),
			}))
		}
	}
	return res
}
