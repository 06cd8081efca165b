package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
)

// scheduleDurationShare is the part of its period a scheduled run may take
// before its Duration alarm fires (45 s of a one-minute schedule).
const scheduleDurationShare = 0.75

// newAlarms creates the stack's CloudWatch alarms: dead letters waiting,
// errors and throttles of every function, and scheduled runs that come close
// to their period. With context alarmTopicArn, every alarm notifies that SNS
// topic.
func newAlarms(stack awscdk.Stack, cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function, q queueResources, ev evaluatorResources) {
	var action awscloudwatch.IAlarmAction
	if cfg.AlarmTopicArn != "" {
		topic := awssns.Topic_FromTopicArn(stack, jsii.String("AlarmTopic"), jsii.String(cfg.AlarmTopicArn))
		action = awscloudwatchactions.NewSnsAction(topic)
	}
	alarm := func(id string, m awscloudwatch.Metric, op awscloudwatch.ComparisonOperator, threshold float64, periods int, desc string) {
		a := m.CreateAlarm(stack, jsii.String(id), &awscloudwatch.CreateAlarmOptions{
			AlarmName:          jsii.String(cfg.prefix() + "-" + id),
			AlarmDescription:   jsii.String(desc),
			ComparisonOperator: op,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(periods),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		if action != nil {
			a.AddAlarmAction(action)
		}
	}

	alarm("DeliveryDLQNotEmpty",
		q.dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}),
		awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
		"Webhook deliveries reached the dead-letter queue: the dispatcher failed on them repeatedly")

	minuteMax := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")}
	if ev.streamFailures != nil {
		alarm("MetricsStreamFailuresNotEmpty", ev.streamFailures.MetricApproximateNumberOfMessagesVisible(minuteMax),
			awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
			"The evaluator failed on metrics stream records after every retry: replay them from the shard and sequence numbers in the queue")
	}
	if ev.shardDLQ != nil {
		alarm("EvaluatorShardDLQNotEmpty", ev.shardDLQ.MetricApproximateNumberOfMessagesVisible(minuteMax),
			awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
			"Scheduled evaluations of a rule shard failed repeatedly")
	}
	alarm("OutboundDLQNotEmpty",
		q.outboundDLQ.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}),
		awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
		"Dial jobs reached the dead-letter queue: the dialer failed on them repeatedly and their calls stay queued")

	five := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}
	for _, f := range fns {
		fn, id := lambdas[f.Name], constructID(f.Name)
		alarm(id+"Errors", fn.MetricErrors(five),
			awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
			fmt.Sprintf("Function %s returned errors or crashed", f.Name))
		alarm(id+"Throttles", fn.MetricThrottles(five),
			awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 0, 1,
			fmt.Sprintf("Function %s was throttled", f.Name))
		if f.MetricsStream {
			// Records waiting in the stream: evaluation falls behind the data.
			alarm(id+"StreamIteratorAge", fn.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{
				Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
			}), awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, 5000, 3,
				fmt.Sprintf("Function %s reads the metrics stream more than 5 s behind: alerts are late", f.Name))
		}
		if f.Every != 0 {
			limit := scheduleDurationShare * float64(f.Every.Milliseconds())
			alarm(id+"NearSchedule", fn.MetricDuration(&awscloudwatch.MetricOptions{
				Period: seconds(f.Every), Statistic: jsii.String("Maximum"),
			}), awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, limit, 2,
				fmt.Sprintf("Runs of %s take more than %.0f%% of its %s period", f.Name, 100*scheduleDurationShare, f.Every))
		}
	}
}
