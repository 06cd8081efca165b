package main

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// Runbook is a page of docs/runbooks: what an alarm of one kind means,
// what the person paged checks first and what they do. Alarms of one
// kind (a function's errors, whichever function) share a page; every
// alarm's description ends with its page (runbookSuffix), and a test
// checks that the page exists.
type Runbook string

// The runbook pages, one per alarm kind.
const (
	RunbookFunctionErrors    Runbook = "docs/runbooks/function-errors.md"
	RunbookFunctionThrottles Runbook = "docs/runbooks/function-throttles.md"
	RunbookDeadLetters       Runbook = "docs/runbooks/dead-letters.md"
	RunbookStreamFailures    Runbook = "docs/runbooks/stream-failures.md"
	RunbookStreamIteratorAge Runbook = "docs/runbooks/stream-iterator-age.md"
	RunbookQueueAge          Runbook = "docs/runbooks/queue-age.md"
	RunbookPendingEvents     Runbook = "docs/runbooks/pending-events.md"
	RunbookScheduledRun      Runbook = "docs/runbooks/scheduled-run.md"
	RunbookAPI5xx            Runbook = "docs/runbooks/api-5xx.md"
	RunbookAPILatency        Runbook = "docs/runbooks/api-latency.md"
	RunbookDynamoDBThrottles Runbook = "docs/runbooks/dynamodb-throttles.md"
	RunbookEvaluationLag     Runbook = "docs/runbooks/evaluation-lag.md"
	RunbookDeliveryFailures  Runbook = "docs/runbooks/delivery-failures.md"
)

// runbookSuffix ends every alarm's description.
func runbookSuffix(r Runbook) string { return " Runbook: " + string(r) }

// Alarm thresholds and windows of the alerting path (the runbooks in
// docs/runbooks say what to do for each).
const (
	// Errors and throttles: one in a minute is normal (a cold start's
	// timeout, a retried throttle); errors in 3 of 5 minutes are not.
	noisyPeriods, noisyDatapoints = 5, 3
	// pendingEventAgeLimit: an event is fanned out as it is written; the
	// repair run takes one older than a minute, every minute. An event
	// pending past two minutes has failed its fan-out and a repair.
	pendingEventAgeLimit = 2 * time.Minute
	// shardQueueAgeLimit: a shard message is sent each minute without a
	// delay and taken at once; older, the shard evaluations are stuck.
	shardQueueAgeLimit = 3 * time.Minute
	// hopQueueAgeLimit: the dispatcher and the dialer send messages back
	// with delays of up to SQS's 15 minutes (retries, pacing, lease
	// checks), which SQS may count in a message's age.
	hopQueueAgeLimit = 16 * time.Minute
	// stuckPeriods, stuckDatapoints: ages only grow while stuck; 2 of 3
	// one-minute periods ignore one late sample.
	stuckPeriods, stuckDatapoints = 3, 2
)

// alarmTopic is the SNS topic every alarm of a regional stack notifies:
// context alarmTopicArn names an existing one; otherwise the stack makes
// its own, which context alarmEmail subscribes an address to.
func alarmTopic(stack awscdk.Stack, cfg StackConfig) awssns.ITopic {
	if cfg.AlarmTopicArn != "" {
		return awssns.Topic_FromTopicArn(stack, jsii.String("AlarmTopic"), jsii.String(cfg.AlarmTopicArn))
	}
	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		TopicName:   jsii.String(cfg.prefix() + "-alarms"),
		DisplayName: jsii.String("VoiceOps " + cfg.Region.Name + " alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	if cfg.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
	}
	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("SNS topic every alarm notifies on ALARM and OK: subscribe the on-call here"),
		Value:       topic.TopicArn(),
	})
	return topic
}

// alarmSpec is one alarm: a threshold crossed (greater than, unless
// Below) in Datapoints of Periods periods of its metric.
type alarmSpec struct {
	ID         string // the construct ID, and the alarm's name after the stack's prefix
	Metric     awscloudwatch.IMetric
	Threshold  float64
	Periods    int
	Datapoints int // 0: Periods
	Desc       string
	Runbook    Runbook
	// Below alarms under the threshold, and on missing data: for a
	// metric that must keep coming.
	Below bool
}

// alarms makes the stack's alarms, each notifying one topic on ALARM and
// on OK, so the person paged also hears when it clears.
type alarms struct {
	stack  awscdk.Stack
	prefix string
	action awscloudwatch.IAlarmAction
}

func newAlarmMaker(stack awscdk.Stack, cfg StackConfig) alarms {
	return alarms{stack: stack, prefix: cfg.prefix(), action: awscloudwatchactions.NewSnsAction(alarmTopic(stack, cfg))}
}

func (a alarms) add(s alarmSpec) awscloudwatch.Alarm {
	dp := s.Datapoints
	if dp == 0 {
		dp = s.Periods
	}
	op, missing := awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD, awscloudwatch.TreatMissingData_NOT_BREACHING
	if s.Below {
		op, missing = awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, awscloudwatch.TreatMissingData_BREACHING
	}
	al := awscloudwatch.NewAlarm(a.stack, jsii.String(s.ID), &awscloudwatch.AlarmProps{
		AlarmName:          jsii.String(a.prefix + "-" + s.ID),
		AlarmDescription:   jsii.String(s.Desc + "." + runbookSuffix(s.Runbook)),
		Metric:             s.Metric,
		ComparisonOperator: op,
		Threshold:          jsii.Number(s.Threshold),
		EvaluationPeriods:  jsii.Number(s.Periods),
		DatapointsToAlarm:  jsii.Number(dp),
		TreatMissingData:   missing,
	})
	al.AddAlarmAction(a.action)
	al.AddOkAction(a.action)
	return al
}

func minuteMaximum() *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")}
}

// newAlarms creates the alerting path's and the functions' alarms: dead
// letters waiting on any DLQ, the age of the oldest message of every
// work queue and of the oldest pending alert event, the metrics stream,
// errors and throttles of every function, and scheduled runs that come
// close to their period.
func newAlarms(a alarms, fns []Function, lambdas map[string]awslambda.Function, q queueResources, ev evaluatorResources) {
	// queueAlarm is an alarm on one queue.
	type queueAlarm struct {
		id    string
		queue awssqs.IQueue
		what  string
		limit time.Duration // the age alarms' threshold
	}
	dlqs := []queueAlarm{
		{id: "DeliveryDLQNotEmpty", queue: q.dlq, what: "Webhook deliveries reached the dead-letter queue: the dispatcher failed on them repeatedly"},
		{id: "OutboundDLQNotEmpty", queue: q.outboundDLQ, what: "Dial jobs reached the dead-letter queue: the dialer failed on them repeatedly and their calls stay queued"},
	}
	if ev.shardDLQ != nil {
		dlqs = append(dlqs, queueAlarm{id: "EvaluatorShardDLQNotEmpty", queue: ev.shardDLQ, what: "Scheduled evaluations of a rule shard failed repeatedly"})
	}
	for _, d := range dlqs {
		a.add(alarmSpec{ID: d.id, Metric: d.queue.MetricApproximateNumberOfMessagesVisible(minuteMaximum()),
			Threshold: 0, Periods: 1, Desc: d.what, Runbook: RunbookDeadLetters})
	}
	if ev.streamFailures != nil {
		a.add(alarmSpec{ID: "MetricsStreamFailuresNotEmpty", Metric: ev.streamFailures.MetricApproximateNumberOfMessagesVisible(minuteMaximum()),
			Threshold: 0, Periods: 1, Runbook: RunbookStreamFailures,
			Desc: "The evaluator gave up on metrics stream records (after its retries, or older than the record age limit): their scopes wait for the schedule's minute, and a record fails"})
	}

	ages := []queueAlarm{
		{id: "DeliveryQueueOldestMessage", queue: q.delivery, limit: hopQueueAgeLimit, what: "webhook deliveries wait in the delivery queue"},
		{id: "OutboundQueueOldestMessage", queue: q.outbound, limit: hopQueueAgeLimit, what: "dial jobs wait in the outbound queue"},
	}
	if ev.shardQueue != nil {
		ages = append(ages, queueAlarm{id: "EvaluatorShardQueueOldestMessage", queue: ev.shardQueue, limit: shardQueueAgeLimit, what: "scheduled shard evaluations wait in the shard queue"})
	}
	for _, g := range ages {
		a.add(alarmSpec{ID: g.id, Metric: g.queue.MetricApproximateAgeOfOldestMessage(minuteMaximum()),
			Threshold: g.limit.Seconds(), Periods: stuckPeriods, Datapoints: stuckDatapoints, Runbook: RunbookQueueAge,
			Desc: fmt.Sprintf("The oldest message of the queue is over %.0f minutes old in %d of %d minutes: %s and nobody takes them", g.limit.Minutes(), stuckDatapoints, stuckPeriods, g.what)})
	}

	for _, src := range []struct{ source, what string }{
		{telemetry.SourceRepair, "the evaluator's repair run could not fan out an alert event"},
		{telemetry.SourceDispatch, "the dispatcher made an event's first attempt"},
	} {
		a.add(alarmSpec{ID: "PendingEventAge" + constructID(src.source),
			Metric:    ownMetric(telemetry.PendingEventAge, "Maximum", 1, map[string]string{telemetry.DimSource: src.source}, ""),
			Threshold: float64(pendingEventAgeLimit.Milliseconds()), Periods: stuckPeriods, Datapoints: stuckDatapoints, Runbook: RunbookPendingEvents,
			Desc: fmt.Sprintf("In %d of %d minutes %s more than %.0f minutes after it was written: alerts are stuck on their way to the receivers", stuckDatapoints, stuckPeriods, src.what, pendingEventAgeLimit.Minutes())})
	}

	minuteSum := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Sum")}
	for _, f := range fns {
		fn, id := lambdas[f.Name], constructID(f.Name)
		a.add(alarmSpec{ID: id + "Errors", Metric: fn.MetricErrors(minuteSum), Threshold: 0,
			Periods: noisyPeriods, Datapoints: noisyDatapoints, Runbook: RunbookFunctionErrors,
			Desc: fmt.Sprintf("Function %s returned errors or crashed in %d of %d minutes", f.Name, noisyDatapoints, noisyPeriods)})
		a.add(alarmSpec{ID: id + "Throttles", Metric: fn.MetricThrottles(minuteSum), Threshold: 0,
			Periods: noisyPeriods, Datapoints: noisyDatapoints, Runbook: RunbookFunctionThrottles,
			Desc: fmt.Sprintf("Function %s was throttled (its reserved concurrency was used up) in %d of %d minutes", f.Name, noisyDatapoints, noisyPeriods)})
		if f.MetricsStream {
			// Records waiting in the stream: evaluation falls behind the data.
			a.add(alarmSpec{ID: id + "StreamIteratorAge", Metric: fn.Metric(jsii.String("IteratorAge"), minuteMaximum()),
				Threshold: 5000, Periods: 3, Runbook: RunbookStreamIteratorAge,
				Desc: fmt.Sprintf("Function %s reads the metrics stream more than 5 s behind for 3 minutes: alerts are late", f.Name)})
		}
		if f.Every != 0 {
			limit := scheduleDurationShare * float64(f.Every.Milliseconds())
			// A function with other sources (the evaluator: stream and
			// shard queue) records its scheduled run's duration itself;
			// its Lambda Duration would mix in every other invocation.
			var m awscloudwatch.IMetric = fn.MetricDuration(&awscloudwatch.MetricOptions{Period: seconds(f.Every), Statistic: jsii.String("Maximum")})
			if f.MetricsStream || f.ShardFanout {
				m = ownMetric(telemetry.ScheduledRunDuration, "Maximum", f.Every.Minutes(), nil, "")
				// Its repair is what sends a stuck event: a schedule that
				// stopped (a disabled rule, every run crashing before its
				// end) is silent in every other alarm.
				a.add(alarmSpec{ID: id + "ScheduleMissing", Below: true, Threshold: 1, Periods: 3, Runbook: RunbookScheduledRun,
					Metric: ownMetric(telemetry.ScheduledRunDuration, "SampleCount", f.Every.Minutes(), nil, ""),
					Desc:   fmt.Sprintf("No scheduled run of %s finished in 3 periods of %.0f minute(s): pending alert events are not repaired", f.Name, f.Every.Minutes())})
			}
			a.add(alarmSpec{ID: id + "NearSchedule", Metric: m, Threshold: limit, Periods: 3, Datapoints: 2, Runbook: RunbookScheduledRun,
				Desc: fmt.Sprintf("Scheduled runs of %s took more than %.0f%% of its %.0f-minute period in 2 of 3 periods", f.Name, 100*scheduleDurationShare, f.Every.Minutes())})
		}
	}
}

// scheduleDurationShare is the part of its period a scheduled run may take
// before its alarm fires (45 s of a one-minute schedule).
const scheduleDurationShare = 0.75
