package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

func TestContextKeysHaveTheirDefaultsInCDKJSON(t *testing.T) {
	ctx := cdkJSONContext(t)
	if ctx["logRetentionDays"] != float64(defaultLogRetentionDays) {
		t.Errorf("cdk.json logRetentionDays = %v, want %d", ctx["logRetentionDays"], defaultLogRetentionDays)
	}
	if ctx["tracing"] != defaultTracing {
		t.Errorf("cdk.json tracing = %v, want %v", ctx["tracing"], defaultTracing)
	}
}

func TestLogRetentionAndTracingFollowTheContext(t *testing.T) {
	for _, tc := range []struct {
		ctx     map[string]any
		days    int
		tracing string
	}{
		{map[string]any{"region": "us"}, 30, "Active"},
		{map[string]any{"region": "us", "logRetentionDays": "7", "tracing": "false"}, 7, "PassThrough"},
		{map[string]any{"region": "us", "logRetentionDays.us": 365, "tracing.us": false}, 365, "PassThrough"},
	} {
		tmpl := mustSynth(t, tc.ctx, Functions).templates["VoiceOps-us"]
		check(t, "retention", func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::Logs::LogGroup"), objectLike(obj{"RetentionInDays": tc.days}))
			// every function's log group and one access log per host
			tmpl.ResourceCountIs(jsii.String("AWS::Logs::LogGroup"), jsii.Number(len(Functions)+len(servedHosts(Functions))))
		})
		check(t, "tracing", func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), objectLike(obj{"TracingConfig": obj{"Mode": tc.tracing}}))
		})
	}
	for _, bad := range []map[string]any{{"logRetentionDays": "10"}, {"logRetentionDays": "x"}, {"tracing": "sometimes"}} {
		bad["region"] = "us"
		if _, err := trySynth(t, bad, Functions); err == nil {
			t.Errorf("context %v: no error", bad)
		}
	}
}

func TestEveryStageWritesJSONAccessLogs(t *testing.T) {
	s := defaultSynth(t)
	for name, tmpl := range s.json {
		stages := resources(tmpl, "AWS::ApiGatewayV2::Stage")
		if len(stages) == 0 {
			t.Errorf("%s: no stage", name)
		}
		for _, st := range stages {
			als, _ := props(st)["AccessLogSettings"].(map[string]any)
			format, _ := als["Format"].(string)
			var fields map[string]string
			if err := json.Unmarshal([]byte(format), &fields); err != nil {
				t.Errorf("%s: access log format %q is not JSON: %v", name, format, err)
				continue
			}
			for key, want := range map[string]string{
				"requestId": "$context.requestId", "routeKey": "$context.routeKey", "status": "$context.status",
				"latency": "$context.responseLatency", "integrationError": "$context.integrationErrorMessage",
			} {
				if fields[key] != want {
					t.Errorf("%s: access log %s = %q, want %q", name, key, fields[key], want)
				}
			}
			if als["DestinationArn"] == nil {
				t.Errorf("%s: access log without a destination", name)
			}
		}
	}
}

func TestDashboardShowsEachConcern(t *testing.T) {
	s := defaultSynth(t)
	for _, r := range Regions {
		name := "VoiceOps-" + r.Name
		dashboards := resources(s.json[name], "AWS::CloudWatch::Dashboard")
		if len(dashboards) != 1 {
			t.Fatalf("%s: %d dashboards, want 1", name, len(dashboards))
		}
		body, err := json.Marshal(props(dashboards[0])["DashboardBody"])
		if err != nil {
			t.Fatal(err)
		}
		text := string(body)
		if got := props(dashboards[0])["DashboardName"]; got != "voiceops-"+r.Name+"-operations" {
			t.Errorf("%s: dashboard name %v", name, got)
		}
		for _, want := range []string{
			// API per host, evaluation, deliveries, DLQs, dials, DynamoDB, functions
			`AWS/ApiGateway`, `Latency`, `5xx`, telemetry.EvaluationLag.Name, telemetry.Transitions.Name,
			telemetry.DeliveryAttempts.Name, `ApproximateNumberOfMessagesVisible`, telemetry.Dials.Name,
			`ReadThrottleEvents`, `WriteThrottleEvents`, `AWS/Lambda`, `Errors`, `Duration`,
			telemetry.PendingEventAge.Name, `ApproximateAgeOfOldestMessage`,
			`studio host`, `base host`,
		} {
			if !strings.Contains(text, strings.ReplaceAll(want, `/`, `\\/`)) && !strings.Contains(text, want) {
				t.Errorf("%s: the dashboard shows no %s", name, want)
			}
		}
	}
}

func TestObservabilityAlarms(t *testing.T) {
	tmpl := defaultSynth(t).templates["VoiceOps-uk"]
	check(t, "API alarms per host", func() {
		for _, h := range servedHosts(Functions) {
			id := constructID(string(h))
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
				"AlarmName": "voiceops-uk-Api5xxRate" + id, "Threshold": api5xxRatePercent,
				"Metrics": arrayWith(objectLike(obj{"Expression": objectLikeString("100 * FILL(e, 0) / n")})),
			}))
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
				"AlarmName": "voiceops-uk-ApiLatencyP99" + id, "Namespace": "AWS/ApiGateway", "MetricName": "Latency",
				"ExtendedStatistic": "p99", "Threshold": apiLatencyP99Millis[h],
			}))
		}
	})
	check(t, "DynamoDB throttles per table", func() {
		for _, tb := range tables.All {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
				"AlarmName": "voiceops-uk-DynamoDBThrottles" + constructID(tb.ID), "Threshold": 0,
			}))
		}
	})
	check(t, "evaluation lag", func() {
		for _, src := range []string{"Stream", "Schedule"} {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
				"AlarmName": "voiceops-uk-EvaluationLag" + src, "Namespace": telemetry.Namespace,
				"MetricName": telemetry.EvaluationLag.Name, "Threshold": evaluationLagMillis, "Statistic": "Maximum",
			}))
		}
	})
	check(t, "delivery failure rate", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
			"AlarmName": "voiceops-uk-DeliveryFailureRate", "Threshold": deliveryFailPercent,
		}))
	})
}

// objectLikeString matches a string containing sub.
func objectLikeString(sub string) assertions.Matcher {
	return assertions.Match_StringLikeRegexp(jsii.String(regexp.QuoteMeta(sub)))
}
