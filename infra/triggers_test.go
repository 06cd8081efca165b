package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/tables"
)

// testFunctions exercise the trigger kinds and the base host before the real
// evaluator, dispatcher and base-host functions exist. Their names cannot clash
// with real functions, so this list keeps working when those arrive.
var testFunctions = []Function{
	{
		Name: "test-scheduled", MemoryMB: 512, Timeout: 50 * time.Second, Env: struct {
			Config     string `env:"CONFIG_TABLE"`
			Metrics    string `env:"METRICS_TABLE"`
			Deliveries string `env:"DELIVERIES_TABLE"`
			Queue      string `env:"DELIVERY_QUEUE_URL"`
		}{},
		Tables:       []Access{on(tables.Config, getItem, putItem), on(tables.Metrics, query), on(tables.Deliveries, putItem)},
		SendsToQueue: true,
		Every:        time.Minute,
	},
	{
		Name: "test-consumer", MemoryMB: 256, Timeout: DispatcherTimeout, Env: lambdamain.Dispatcher{},
		Tables:       []Access{on(tables.Config, getItem), on(tables.Deliveries, getItem, putItem)},
		SendsToQueue: true,
		Queue:        &QueueConsumer{BatchSize: 10, MaxConcurrency: 20},
		LinksConsole: true,
	},
	{
		Name: "test-base", MemoryMB: 256, Timeout: 10 * time.Second, Deadline: 5 * time.Second, Env: struct {
			Config   string `env:"CONFIG_TABLE"`
			Requests string `env:"REQUESTS_TABLE"`
		}{},
		Tables: []Access{on(tables.Config, getItem), requestGuards},
		Routes: []Route{
			{Host: BaseHost, Method: "ANY", Path: "/v1/{account_id}/{project_id}/chat/{version}/create"},
			{Host: StudioHost, Method: "ANY", Path: "/internal/v1/test-only"},
		},
	},
}

func TestScheduleAndQueueTriggers(t *testing.T) {
	tmpl := mustSynth(t, map[string]any{"region": "uk"}, testFunctions).templates["VoiceOps-uk"]

	check(t, "schedule", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
			"ScheduleExpression": "rate(1 minute)",
			"State":              "ENABLED",
			"Targets": arrayWith(objectLike(obj{
				"Arn":         obj{"Fn::GetAtt": arrayWith()},
				"RetryPolicy": obj{"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60},
			})),
		})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Permission"), obj{
			"Action": "lambda:InvokeFunction", "Principal": "events.amazonaws.com",
		})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), obj{"MaximumRetryAttempts": 0})
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
			"Namespace": "AWS/Lambda", "MetricName": "Duration", "Statistic": "Maximum",
			"Period": 60, "Threshold": 45000, "ComparisonOperator": "GreaterThanThreshold",
		})
	})

	check(t, "queue consumer", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"BatchSize":             10,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         obj{"MaximumConcurrency": 20},
			"EventSourceArn":        obj{"Fn::GetAtt": arrayWith("Arn")},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj{
			"PolicyDocument": objectLike(obj{"Statement": arrayWith(objectLike(obj{
				"Action": arrayWith("sqs:DeleteMessage", "sqs:ReceiveMessage"),
			}))}),
		})
	})

	check(t, "both hosts get routes", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(2))
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{
			"RouteKey": "ANY /v1/{account_id}/{project_id}/chat/{version}/create",
		})
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": "ANY /internal/v1/test-only"})
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(2))
		// One integration per function and host.
		tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Integration"), jsii.Number(2))
	})

	check(t, "alarms", func() {
		// two DLQs, the age of the delivery and outbound queues, the
		// pending events' age seen by the repair and the dispatcher
		tmpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Alarm"), jsii.Number(2+2+2+2*len(testFunctions)+1+ObservabilityAlarmCount(len(servedHosts(testFunctions)))))
	})
}

func TestAlarmTopic(t *testing.T) {
	topic := "arn:aws:sns:eu-west-2:123456789012:ops"
	tmpl := mustSynth(t, map[string]any{"region": "uk", "alarmTopicArn": topic, "alarmEmail": "ignored@example.com"}, Functions).templates["VoiceOps-uk"]
	check(t, "every alarm notifies the given topic on ALARM and OK", func() {
		tmpl.AllResourcesProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{"AlarmActions": []any{topic}, "OKActions": []any{topic}}))
	})
	check(t, "no topic of its own", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(0))
		tmpl.ResourceCountIs(jsii.String("AWS::SNS::Subscription"), jsii.Number(0))
	})

	own := mustSynth(t, map[string]any{"region": "uk", "alarmEmail": "oncall@example.com"}, Functions)
	tj := own.json["VoiceOps-uk"]
	check(t, "the stack's own topic, the address subscribed", func() {
		tmpl := own.templates["VoiceOps-uk"]
		tmpl.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::SNS::Topic"), obj{"TopicName": "voiceops-uk-alarms"})
		tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), obj{"Protocol": "email", "Endpoint": "oncall@example.com"})
		tmpl.HasOutput(jsii.String("AlarmTopicArn"), obj{"Value": obj{"Ref": assertions.Match_AnyValue()}})
	})
	var topicID string
	for id, res := range tj["Resources"].(map[string]any) {
		if res.(map[string]any)["Type"] == "AWS::SNS::Topic" {
			topicID = id
		}
	}
	for _, a := range resources(tj, "AWS::CloudWatch::Alarm") {
		for _, key := range []string{"AlarmActions", "OKActions"} {
			if got, _ := json.Marshal(props(a)[key]); string(got) != `[{"Ref":"`+topicID+`"}]` {
				t.Errorf("alarm %v: %s %s, want the stack's topic", props(a)["AlarmName"], key, got)
			}
		}
	}
	none := mustSynth(t, map[string]any{"region": "uk"}, Functions).templates["VoiceOps-uk"]
	check(t, "no address, no subscription", func() {
		none.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(1))
		none.ResourceCountIs(jsii.String("AWS::SNS::Subscription"), jsii.Number(0))
	})
}

func TestRegionContext(t *testing.T) {
	for _, tc := range []struct {
		region string
		want   []string
	}{
		{"us", []string{"VoiceOps-us"}},
		{"UK", []string{"VoiceOps-uk"}},
		{"global", []string{"VoiceOps-global"}},
	} {
		t.Run(tc.region, func(t *testing.T) {
			s := mustSynth(t, map[string]any{"region": tc.region}, Functions)
			if len(s.stacks) != len(tc.want) {
				t.Fatalf("stacks %v, want %v", keys(s.stacks), tc.want)
			}
			for _, name := range tc.want {
				if s.stacks[name] == nil {
					t.Errorf("stacks %v, want %v", keys(s.stacks), tc.want)
				}
			}
		})
	}
	if _, err := trySynth(t, map[string]any{"region": "mars"}, Functions); err == nil || !strings.Contains(err.Error(), "mars") {
		t.Errorf("region=mars: err = %v", err)
	}
	for _, bad := range []map[string]any{{"deletionProtection": "maybe"}, {"apiRateLimit": "-1"}, {"apiBurstLimit": "x"}} {
		bad["region"] = "us"
		if _, err := trySynth(t, bad, Functions); err == nil {
			t.Errorf("context %v: no error", bad)
		}
	}
}

func TestAccountComesFromContextOrEnvironment(t *testing.T) {
	s := mustSynth(t, map[string]any{"region": "us", "account": "123456789012"}, Functions)
	if got := *s.stacks["VoiceOps-us"].Account(); got != "123456789012" {
		t.Errorf("account = %s", got)
	}
	// Without either, the stack is account-agnostic (a token), and
	// synthesizes offline.
	s = mustSynth(t, map[string]any{"region": "us"}, Functions)
	if got := *s.stacks["VoiceOps-us"].Account(); !strings.Contains(got, "AccountId") && !strings.HasPrefix(got, "${Token") {
		t.Errorf("account = %s, want the AWS::AccountId token", got)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFunctionsMatchDirectories keeps Functions and functions/ in step: every
// function directory with a main.go has an entry (or is the global stack's
// function), every entry a directory.
func TestFunctionsMatchDirectories(t *testing.T) {
	listed := map[string]bool{MisdirectedFunction: true}
	for _, f := range Functions {
		listed[f.Name] = true
		if info, err := os.Stat(filepath.Join("..", "functions", f.Name)); err != nil || !info.IsDir() {
			t.Errorf("Functions lists %q but functions/%s does not exist", f.Name, f.Name)
		}
	}
	mains, err := filepath.Glob(filepath.Join("..", "functions", "*", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mains {
		name := filepath.Base(filepath.Dir(m))
		if !listed[name] {
			t.Errorf("functions/%s has a main.go but no entry in Functions (infra/functions.go)", name)
		}
	}
}

func TestValidateFunctions(t *testing.T) {
	good := Function{
		Name: "ok", MemoryMB: 256, Timeout: 10 * time.Second, Deadline: 5 * time.Second, Env: struct {
			Requests string `env:"REQUESTS_TABLE"`
		}{},
		Tables: []Access{requestGuards},
		Routes: []Route{{Host: StudioHost, Method: "ANY", Path: "/v1/things/{id}"}},
	}
	if err := validateFunctions(Functions); err != nil {
		t.Fatalf("Functions: %v", err)
	}
	if err := validateFunctions(testFunctions); err != nil {
		t.Fatalf("testFunctions: %v", err)
	}
	if err := validateFunctions([]Function{good}); err != nil {
		t.Fatalf("good function: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Function)
		want   string
	}{
		{"bad name", func(f *Function) { f.Name = "Bad_Name" }, "name must match"},
		{"small memory", func(f *Function) { f.MemoryMB = 64 }, "memory"},
		{"long timeout", func(f *Function) { f.Timeout = 20 * time.Minute }, "timeout"},
		{"fractional timeout", func(f *Function) { f.Timeout = 1500 * time.Millisecond }, "timeout"},
		{"API timeout", func(f *Function) { f.Timeout = 60 * time.Second }, "integration timeout"},
		{"no environment", func(f *Function) { f.Env = nil }, "lambdamain.Environments"},
		{"a table's name without access", func(f *Function) { f.Env = lambdamain.Sweeper{} }, "access to the config table"},
		{"access without the table's name", func(f *Function) { f.Tables = append(f.Tables, on(tables.Calls, getItem)) }, "CALLS_TABLE"},
		{"an unknown action", func(f *Function) { f.Tables = append(f.Tables, on(tables.Calls, "dynamodb:Scan")) }, `"dynamodb:Scan" is not one of`},
		{"an unknown index", func(f *Function) { f.Tables = []Access{requestGuards.index("gsi1")} }, `has no index "gsi1"`},
		{"a secret without its ARN", func(f *Function) { f.ReadsInternalKey = true }, "INTERNAL_KEY_PARAMETER"},
		{"a variable infra does not set", func(f *Function) {
			f.Env = struct {
				Requests string `env:"REQUESTS_TABLE"`
				Other    string `env:"OTHER"`
			}{}
		}, "OTHER, which infra does not set"},
		{"no request deadline", func(f *Function) { f.Deadline = 0 }, "ResponseMargin"},
		{"deadline too close to the timeout", func(f *Function) { f.Deadline = f.Timeout - time.Second }, "ResponseMargin"},
		{"deadline without routes", func(f *Function) { f.Routes, f.Every = nil, time.Minute }, "deadline without routes"},
		{"no trigger", func(f *Function) { f.Routes = nil }, "exactly one trigger"},
		{"two triggers", func(f *Function) { f.Every = time.Minute }, "exactly one trigger"},
		{"unknown host", func(f *Function) { f.Routes[0].Host = "other" }, "unknown host"},
		{"unknown method", func(f *Function) { f.Routes[0].Method = "FETCH" }, "must be ANY"},
		{"one method", func(f *Function) { f.Routes[0].Method = "GET" }, "must be ANY"},
		{"$default with routes", func(f *Function) { f.DefaultRoute = true }, "no routes of its own"},
		{"bad path", func(f *Function) { f.Routes[0].Path = "v1/x" }, "path"},
		{"proxy not last", func(f *Function) { f.Routes[0].Path = "/v1/{proxy+}/x" }, "path"},
		{"unknown table", func(f *Function) { f.Tables = append(f.Tables, on(tables.Table{ID: "nope"}, getItem)) }, "not in tables.All"},
		{"public routes without the requests table", func(f *Function) { f.Tables = nil }, "request guards' access to the requests table"},
		{"route throttle without limits", func(f *Function) { f.Throttle = &Throttle{RateLimit: 10} }, "route throttle"},
		{"schedule not minutes", func(f *Function) { f.Routes, f.Every = nil, 90*time.Second }, "whole minutes"},
		{"run longer than schedule", func(f *Function) { f.Routes, f.Every, f.Timeout = nil, time.Minute, time.Minute }, "shorter than the schedule"},
		{"slow consumer", func(f *Function) {
			f.Routes, f.Timeout, f.Queue = nil, DispatcherTimeout+time.Second, &QueueConsumer{BatchSize: 10, MaxConcurrency: 5}
		}, "DispatcherTimeout"},
		{"uncapped consumer", func(f *Function) { f.Routes, f.Queue = nil, &QueueConsumer{BatchSize: 10} }, "max concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := good
			f.Routes = append([]Route{}, good.Routes...)
			tc.change(&f)
			err := validateFunctions([]Function{f})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("duplicates", func(t *testing.T) {
		other := good
		other.Name = "other"
		err := validateFunctions([]Function{good, good, other})
		if err == nil || !strings.Contains(err.Error(), "listed twice") || !strings.Contains(err.Error(), "also served by") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("two consumers", func(t *testing.T) {
		c := Function{Name: "c1", MemoryMB: 128, Timeout: time.Second, Env: struct{}{}, Queue: &QueueConsumer{BatchSize: 1, MaxConcurrency: 2}}
		d := c
		d.Name = "c2"
		if err := validateFunctions([]Function{c, d}); err == nil || !strings.Contains(err.Error(), "at most one") {
			t.Errorf("err = %v", err)
		}
		o1 := Function{Name: "o1", MemoryMB: 128, Timeout: time.Second, Env: struct{}{}, Queue: &QueueConsumer{BatchSize: 1, MaxConcurrency: 2, Outbound: true}}
		o2 := o1
		o2.Name = "o2"
		if err := validateFunctions([]Function{c, o1}); err != nil {
			t.Errorf("one consumer per queue: %v", err)
		}
		if err := validateFunctions([]Function{o1, o2}); err == nil || !strings.Contains(err.Error(), "outbound queue; at most one") {
			t.Errorf("two outbound consumers: %v", err)
		}
	})
}

// TestRealStackHasTheEvaluatorScheduleAndDispatcher checks the product's own
// function list: the evaluator runs every minute and the dispatcher drains
// the delivery queue with batch item failures and capped concurrency.
func TestRealStackHasTheEvaluatorScheduleAndDispatcher(t *testing.T) {
	tmpl := mustSynth(t, map[string]any{"region": "us"}, Functions).templates["VoiceOps-us"]
	check(t, "evaluator schedule", func() {
		tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(1))
		tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{"ScheduleExpression": "rate(1 minute)", "State": "ENABLED"})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{"Timeout": 55, "MemorySize": 512})
	})
	check(t, "idle sweep on the same rule", func() {
		// One rule, two targets: the evaluator and the sweeper, each
		// without retries.
		target := objectLike(obj{"RetryPolicy": obj{"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 60}})
		targets := []any{target, target}
		tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
			"ScheduleExpression": "rate(1 minute)",
			"Description":        "Runs evaluator and sweeper every 1m0s",
			"Targets":            assertions.Match_ArrayEquals(&targets),
		})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
			"Timeout": 50, "MemorySize": 256,
			"Environment": obj{"Variables": objectLike(obj{"CONVERSATIONS_TABLE": assertions.Match_AnyValue(), "CONFIG_TABLE": assertions.Match_AnyValue()})},
		})
	})
	check(t, "sparse index of open conversations, index of turns", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj{
			"TableName": "voiceops-us-conversations",
			"GlobalSecondaryIndexes": []any{obj{
				"IndexName":  "open",
				"KeySchema":  []any{obj{"AttributeName": "open_pk", "KeyType": "HASH"}, obj{"AttributeName": "open_sk", "KeyType": "RANGE"}},
				"Projection": obj{"ProjectionType": "ALL"},
			}, obj{
				// A list page's turns (shared/store/dynamo/turnsrun.go).
				"IndexName":  "turns",
				"KeySchema":  []any{obj{"AttributeName": "turns_pk", "KeyType": "HASH"}, obj{"AttributeName": "turns_sk", "KeyType": "RANGE"}},
				"Projection": obj{"ProjectionType": "ALL"},
			}, obj{
				// The idle sweep's index that replaces open (keys only).
				"IndexName":  "idle",
				"KeySchema":  []any{obj{"AttributeName": "idle_pk", "KeyType": "HASH"}, obj{"AttributeName": "idle_sk", "KeyType": "RANGE"}},
				"Projection": obj{"ProjectionType": "KEYS_ONLY"},
			}},
		})
		// The sweeper may query the index.
		tj := defaultSynth(t).json["VoiceOps-us"]
		_, fn := functionResource(t, tj, "sweeper")
		if gs := roleGrants(tj, getAttTarget(props(fn)["Role"])); !slices.Contains(gs, grant{query, "table:conversations/index/open"}) ||
			!slices.Contains(gs, grant{query, "table:conversations/index/idle"}) {
			t.Errorf("sweeper grants %v", gs)
		}
	})
	check(t, "dispatcher and dialer", func() {
		// The dispatcher's, the dialer's, the evaluator's stream and its
		// shard queue.
		tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(4))
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         obj{"MaximumConcurrency": 20},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         obj{"MaximumConcurrency": 5},
		})
	})
	check(t, "each consumer drains its own queue", func() {
		queueOf := map[string]string{} // function -> queue logical ID
		tj := mustSynth(t, map[string]any{"region": "us"}, Functions).json["VoiceOps-us"]
		for _, m := range resources(tj, "AWS::Lambda::EventSourceMapping") {
			fnRef, _ := props(m)["FunctionName"].(map[string]any)["Ref"].(string)
			queueOf[fnRef] = getAttTarget(props(m)["EventSourceArn"])
		}
		dialerID, _ := functionResource(t, tj, "dialer")
		dispatcherID, _ := functionResource(t, tj, "dispatcher")
		if !strings.HasPrefix(queueOf[dialerID], "OutboundQueue") || !strings.HasPrefix(queueOf[dispatcherID], "DeliveryQueue") {
			t.Errorf("consumers: %v", queueOf)
		}
	})
	check(t, "intake route", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": "ANY /internal/v1/metric-events"})
	})
}

// TestEvaluatorStreamAndShardFanout: the metrics table has a KEYS_ONLY
// stream; the evaluator consumes it with no batching window (a record is
// evaluated at the next poll: the time to notify), partial batch failures, bisection, bounded retries, an SQS on-failure
// destination with an alarm, parallel lanes per shard, two retries and a
// record age of a minute (a poison record leaves its lane within seconds;
// the schedule covers what ages out), and only INSERTs and MODIFYs (no TTL
// deletions); the schedule's shard
// messages go to a queue of their own, consumed one shard per invocation.
func TestEvaluatorStreamAndShardFanout(t *testing.T) {
	tmpl := mustSynth(t, map[string]any{"region": "us"}, Functions).templates["VoiceOps-us"]
	check(t, "metrics table stream", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), obj{
			"TableName": "voiceops-us-metrics", "StreamSpecification": obj{"StreamViewType": "KEYS_ONLY"},
		})
	})
	check(t, "stream mapping", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"EventSourceArn":                 obj{"Fn::GetAtt": arrayWith("StreamArn")},
			"StartingPosition":               "LATEST",
			"BatchSize":                      streamBatchSize,
			"MaximumBatchingWindowInSeconds": 0,
			"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
			"BisectBatchOnFunctionError":     true,
			"ParallelizationFactor":          streamParallelization,
			"MaximumRetryAttempts":           streamRetries,
			"MaximumRecordAgeInSeconds":      60,
			"DestinationConfig":              obj{"OnFailure": obj{"Destination": obj{"Fn::GetAtt": arrayWith("Arn")}}},
			"FilterCriteria":                 obj{"Filters": []any{obj{"Pattern": `{"eventName":["INSERT","MODIFY"]}`}}},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj{
			"PolicyDocument": objectLike(obj{"Statement": arrayWith(objectLike(obj{
				"Action": arrayWith("dynamodb:GetRecords", "dynamodb:GetShardIterator"),
			}))}),
		})
	})
	check(t, "shard fan-out", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"BatchSize":             1,
			"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			"ScalingConfig":         obj{"MaximumConcurrency": 16},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::Lambda::Function"), obj{
			"Environment": obj{"Variables": objectLike(obj{"SHARD_QUEUE_URL": obj{"Ref": assertions.Match_AnyValue()}})},
		})
		tmpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), obj{
			"RedrivePolicy": obj{"deadLetterTargetArn": assertions.Match_AnyValue(), "maxReceiveCount": shardMaxReceives},
		})
	})
	check(t, "alarms", func() {
		for _, name := range []string{"voiceops-us-MetricsStreamFailuresNotEmpty", "voiceops-us-EvaluatorShardDLQNotEmpty"} {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"AlarmName": name, "Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
				"Threshold": 0, "ComparisonOperator": "GreaterThanThreshold",
			})
		}
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
			"Namespace": "AWS/Lambda", "MetricName": "IteratorAge", "Threshold": 5000,
		})
	})
}

// readsInternalKey matches a function main that reads the internal key
// (internalkey.Digest at start, internalkey.NewLazy on the first internal
// request) or names the key's variable itself.
// TestOnlyOutboundSendersMaySendDialJobs: sqs:SendMessage on the outbound
// queue goes to the functions with SendsToOutbound (the trigger and the
// dialer), and to no other.
func TestOnlyOutboundSendersMaySendDialJobs(t *testing.T) {
	tj := mustSynth(t, map[string]any{"region": "us"}, Functions).json["VoiceOps-us"]
	var queue string
	for id, res := range tj["Resources"].(map[string]any) {
		if res.(map[string]any)["Type"] == "AWS::SQS::Queue" && strings.HasPrefix(id, "OutboundQueue") {
			queue = id
		}
	}
	if queue == "" {
		t.Fatal("no outbound queue")
	}
	for _, f := range Functions {
		_, fn := functionResource(t, tj, f.Name)
		role := getAttTarget(props(fn)["Role"])
		sends := false
		for _, pol := range resources(tj, "AWS::IAM::Policy") {
			roles, _ := json.Marshal(props(pol)["Roles"])
			if !strings.Contains(string(roles), `{"Ref":"`+role+`"}`) {
				continue
			}
			doc, _ := props(pol)["PolicyDocument"].(map[string]any)
			stmts, _ := doc["Statement"].([]any)
			for _, st := range stmts {
				st := st.(map[string]any)
				res, _ := json.Marshal(st["Resource"])
				if st["Effect"] == "Allow" && slices.Contains(strings1(st["Action"]), "sqs:SendMessage") && strings.Contains(string(res), `"`+queue+`"`) {
					sends = true
				}
			}
		}
		if sends != f.SendsToOutbound {
			t.Errorf("function %s may send to the outbound queue: %v; SendsToOutbound: %v", f.Name, sends, f.SendsToOutbound)
		}
	}
}
