package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// TestEveryAlarmNotifiesOnAlarmAndOK: as cdk.json synthesizes them (no
// topic given), every alarm of every stack notifies an SNS topic when it
// fires and when it clears.
func TestEveryAlarmNotifiesOnAlarmAndOK(t *testing.T) {
	s := defaultSynth(t)
	n := 0
	for name, tj := range s.json {
		for _, a := range resources(tj, "AWS::CloudWatch::Alarm") {
			n++
			for _, key := range []string{"AlarmActions", "OKActions"} {
				if actions, _ := props(a)[key].([]any); len(actions) == 0 {
					t.Errorf("%s: alarm %v has no %s", name, props(a)["AlarmName"], key)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no alarm")
	}
}

var runbookRef = regexp.MustCompile(`Runbook: (docs/runbooks/[a-z0-9-]+\.md)$`)

// TestEveryAlarmNamesAnExistingRunbook: every alarm's description ends
// with a page of docs/runbooks that exists, a page has no `sh` block (the
// README runner's kind: these commands need AWS), and every page is some
// alarm's.
func TestEveryAlarmNamesAnExistingRunbook(t *testing.T) {
	s := defaultSynth(t)
	used := map[string]bool{}
	for name, tj := range s.json {
		for _, a := range resources(tj, "AWS::CloudWatch::Alarm") {
			desc, _ := props(a)["AlarmDescription"].(string)
			m := runbookRef.FindStringSubmatch(desc)
			if m == nil {
				t.Errorf("%s: alarm %v: description %q names no runbook", name, props(a)["AlarmName"], desc)
				continue
			}
			used[m[1]] = true
		}
	}
	for page := range used {
		text, err := os.ReadFile(filepath.Join("..", page))
		if err != nil {
			t.Errorf("runbook %s: %v", page, err)
			continue
		}
		for _, want := range []string{"## What it means", "## Check first", "## What to do"} {
			if !strings.Contains(string(text), want) {
				t.Errorf("runbook %s has no %q section", page, want)
			}
		}
	}
	pages, err := filepath.Glob("../docs/runbooks/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("runbook pages: %v %v", pages, err)
	}
	for _, p := range pages {
		text, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile("(?m)^```(sh|bash|shell)\\s*$").Match(text) {
			t.Errorf("%s has a sh block: use text or console", p)
		}
		rel := strings.TrimPrefix(filepath.ToSlash(p), "../")
		if filepath.Base(p) != "README.md" && !used[rel] {
			t.Errorf("%s is no alarm's runbook", rel)
		}
	}
}

// alarmsNamed returns the alarms of a template by name.
func alarmsNamed(tj map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, a := range resources(tj, "AWS::CloudWatch::Alarm") {
		out[props(a)["AlarmName"].(string)] = props(a)
	}
	return out
}

// TestEveryWayAnAlertGetsStuckIsAlarmed: the age of the oldest pending
// alert event (as the repair and the dispatcher see it), of the oldest
// message of each work queue, every dead-letter queue and the stream's
// failure destination have alarms; the evaluator's schedule alarm
// measures its scheduled run alone.
func TestEveryWayAnAlertGetsStuckIsAlarmed(t *testing.T) {
	tmpl := defaultSynth(t).templates["VoiceOps-eu"]
	tj := defaultSynth(t).json["VoiceOps-eu"]
	for _, src := range []string{telemetry.SourceRepair, telemetry.SourceDispatch} {
		check(t, "pending event age "+src, func() {
			tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
				"AlarmName": "voiceops-eu-PendingEventAge" + constructID(src), "Namespace": telemetry.Namespace,
				"MetricName": telemetry.PendingEventAge.Name, "Dimensions": []any{obj{"Name": telemetry.DimSource, "Value": src}},
				"Statistic": "Maximum", "Period": 60, "Threshold": 120000, "EvaluationPeriods": 3, "DatapointsToAlarm": 2,
				"ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
			}))
		})
	}
	// Each work queue's oldest message, by the queue it measures.
	ages := map[string]float64{}
	for _, a := range alarmsNamed(tj) {
		if a["MetricName"] != "ApproximateAgeOfOldestMessage" {
			continue
		}
		if a["Statistic"] != "Maximum" || a["Period"] != float64(60) || a["EvaluationPeriods"] != float64(3) || a["DatapointsToAlarm"] != float64(2) {
			t.Errorf("queue age alarm %v: %v %v %v/%v", a["AlarmName"], a["Statistic"], a["Period"], a["DatapointsToAlarm"], a["EvaluationPeriods"])
		}
		dims, _ := a["Dimensions"].([]any)
		ages[getAttTarget(dims[0].(map[string]any)["Value"])] = a["Threshold"].(float64)
	}
	want := map[string]float64{"DeliveryQueue": hopQueueAgeLimit.Seconds(), "OutboundQueue": hopQueueAgeLimit.Seconds(), "EvaluatorShardQueue": shardQueueAgeLimit.Seconds()}
	for prefix, threshold := range want {
		found := false
		for q, th := range ages {
			if strings.HasPrefix(q, prefix) && !strings.Contains(q, "DLQ") {
				found = true
				if th != threshold {
					t.Errorf("%s age threshold %v, want %v", q, th, threshold)
				}
			}
		}
		if !found {
			t.Errorf("no age alarm on the %s (alarms on %v)", prefix, ages)
		}
	}
	// Every queue that holds failures (a redrive target, the stream's
	// on-failure destination) alarms when anything is in it.
	var dead []string
	for _, q := range resources(tj, "AWS::SQS::Queue") {
		if rp, ok := props(q)["RedrivePolicy"].(map[string]any); ok {
			dead = append(dead, getAttTarget(rp["deadLetterTargetArn"]))
		}
	}
	for _, m := range resources(tj, "AWS::Lambda::EventSourceMapping") {
		if dc, ok := props(m)["DestinationConfig"].(map[string]any); ok {
			dead = append(dead, getAttTarget(dc["OnFailure"].(map[string]any)["Destination"]))
		}
	}
	if len(dead) != 4 {
		t.Errorf("queues holding failures: %v, want the delivery, outbound and shard DLQs and the stream's", dead)
	}
	for _, q := range dead {
		found := false
		for _, a := range alarmsNamed(tj) {
			dims, _ := a["Dimensions"].([]any)
			if a["MetricName"] == "ApproximateNumberOfMessagesVisible" && len(dims) == 1 && getAttTarget(dims[0].(map[string]any)["Value"]) == q &&
				a["Threshold"] == float64(0) && a["EvaluationPeriods"] == float64(1) {
				found = true
			}
		}
		if !found {
			t.Errorf("no alarm on anything in %s", q)
		}
	}
	check(t, "stream iterator age", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
			"AlarmName": "voiceops-eu-EvaluatorStreamIteratorAge", "Namespace": "AWS/Lambda", "MetricName": "IteratorAge",
		}))
	})
	check(t, "the evaluator's schedule alarm measures its scheduled run", func() {
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
			"AlarmName": "voiceops-eu-EvaluatorNearSchedule", "Namespace": telemetry.Namespace,
			"MetricName": telemetry.ScheduledRunDuration.Name, "Statistic": "Maximum", "Period": 60,
			"Threshold": 45000, "EvaluationPeriods": 3, "DatapointsToAlarm": 2, "Dimensions": assertions.Match_Absent(),
		}))
		// A schedule that stopped: no run in 3 minutes.
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
			"AlarmName": "voiceops-eu-EvaluatorScheduleMissing", "Namespace": telemetry.Namespace,
			"MetricName": telemetry.ScheduledRunDuration.Name, "Statistic": "SampleCount", "Period": 60,
			"ComparisonOperator": "LessThanThreshold", "Threshold": 1, "EvaluationPeriods": 3, "DatapointsToAlarm": 3,
			"TreatMissingData": "breaching",
		}))
		// The sweeper has no other source: its Lambda Duration is its run.
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), objectLike(obj{
			"AlarmName": "voiceops-eu-SweeperNearSchedule", "Namespace": "AWS/Lambda", "MetricName": "Duration",
		}))
	})
}

// TestQueuesAndLogGroupsFollowTheTablesRemovalPolicy: with deletion
// protection, every queue (DLQs included) and every log group of every
// stack is kept when its stack is deleted, as the tables are; without,
// they go with it.
func TestQueuesAndLogGroupsFollowTheTablesRemovalPolicy(t *testing.T) {
	for _, tc := range []struct {
		ctx    map[string]any
		policy string
	}{
		{nil, "Retain"},
		{map[string]any{"deletionProtection": "false"}, "Delete"},
	} {
		var s *synthesized
		if tc.ctx == nil {
			s = defaultSynth(t)
		} else {
			s = mustSynth(t, tc.ctx, Functions)
		}
		for name, tmpl := range s.templates {
			for _, typ := range []string{"AWS::SQS::Queue", "AWS::Logs::LogGroup"} {
				if len(resources(s.json[name], typ)) == 0 {
					if typ == "AWS::Logs::LogGroup" || name != "VoiceOps-global" { // it has no queue
						t.Errorf("%s: no %s", name, typ)
					}
					continue
				}
				check(t, fmt.Sprintf("%s %s %s", name, typ, tc.policy), func() {
					tmpl.AllResources(jsii.String(typ), objectLike(obj{"DeletionPolicy": tc.policy, "UpdateReplacePolicy": tc.policy}))
				})
			}
		}
	}
}

// TestReservedConcurrencyLeavesTheUnreservedMinimum: every function
// reserves its concurrency; in each AWS region the stacks' reservations
// stay under the account quota less the 100 AWS keeps unreserved; the
// alerting path's cover what its event sources start at once; context
// overrides a reservation, and one past the quota fails the synth.
func TestReservedConcurrencyLeavesTheUnreservedMinimum(t *testing.T) {
	if got := cdkJSONContext(t)["accountConcurrency"]; got != float64(defaultAccountConcurrency) {
		t.Errorf("cdk.json accountConcurrency = %v, want %d", got, defaultAccountConcurrency)
	}
	s := defaultSynth(t)
	byRegion := map[string]int{}
	for name, tj := range s.json {
		for _, fn := range resources(tj, "AWS::Lambda::Function") {
			n, ok := props(fn)["ReservedConcurrentExecutions"].(float64)
			if !ok || n < 1 {
				t.Errorf("%s: function %v reserves no concurrency", name, props(fn)["Description"])
			}
			byRegion[*s.stacks[name].Region()] += int(n)
		}
	}
	for region, sum := range byRegion {
		if sum > defaultAccountConcurrency-unreservedMinimum {
			t.Errorf("%s: %d reserved, over %d - %d", region, sum, defaultAccountConcurrency, unreservedMinimum)
		}
	}
	if byRegion["us-east-1"] <= byRegion["eu-west-2"] {
		t.Errorf("us-east-1 reserves %d, eu-west-2 %d: the global stack's function is not counted with VoiceOps-us", byRegion["us-east-1"], byRegion["eu-west-2"])
	}
	tj := s.json["VoiceOps-us"]
	for _, f := range Functions {
		_, fn := functionResource(t, tj, f.Name)
		n := props(fn)["ReservedConcurrentExecutions"].(float64)
		if f.Queue != nil && n < float64(f.Queue.MaxConcurrency) {
			t.Errorf("%s reserves %v, under its mapping's %d", f.Name, n, f.Queue.MaxConcurrency)
		}
		if (f.MetricsStream || f.ShardFanout) && n < float64(evaluatorNeeds(f)) {
			t.Errorf("%s reserves %v, under the %d its sources start", f.Name, n, evaluatorNeeds(f))
		}
	}

	over := mustSynth(t, map[string]any{"region": "uk", "reservedConcurrency.alerts": "60"}, Functions).json["VoiceOps-uk"]
	if _, fn := functionResource(t, over, "alerts"); props(fn)["ReservedConcurrentExecutions"] != float64(60) {
		t.Errorf("reservedConcurrency.alerts=60: alerts reserves %v", props(fn)["ReservedConcurrentExecutions"])
	}
	for _, bad := range []map[string]any{
		{"reservedConcurrency.chat": "700"},        // past 900 in sum
		{"accountConcurrency": "500"},              // the defaults past 400
		{"reservedConcurrency.dispatcher": "5"},    // under its mapping's 20
		{"reservedConcurrency.evaluator": "20"},    // under its sources'
		{"reservedConcurrency.evaluator": "none"},  // not a number
		{"reservedConcurrency.misdirected": "800"}, // us-east-1 with VoiceOps-us
	} {
		if _, err := trySynth(t, bad, Functions); err == nil {
			t.Errorf("context %v: no error", bad)
		}
	}
}

// TestEveryRouteHasAThrottle: every route of every stage, the $default
// one included, has a throttle of its own under the stage's.
func TestEveryRouteHasAThrottle(t *testing.T) {
	tj := defaultSynth(t).json["VoiceOps-uk"]
	settings := map[string]map[string]any{}
	for _, st := range resources(tj, "AWS::ApiGatewayV2::Stage") {
		rs, _ := props(st)["RouteSettings"].(map[string]any)
		for k, v := range rs {
			settings[k] = v.(map[string]any)
		}
	}
	routes := resources(tj, "AWS::ApiGatewayV2::Route")
	if len(routes) == 0 {
		t.Fatal("no route")
	}
	for _, r := range routes {
		key := props(r)["RouteKey"].(string)
		s, ok := settings[key]
		if !ok {
			t.Errorf("route %s has no throttle", key)
			continue
		}
		if rate, _ := s["ThrottlingRateLimit"].(float64); rate <= 0 || rate >= defaultRateLimit {
			t.Errorf("route %s: rate %v, want under the stage's %d", key, rate, defaultRateLimit)
		}
	}
	var throttled []string
	for _, f := range Functions {
		if (len(f.Routes) > 0 || f.DefaultRoute) && f.Throttle == nil {
			throttled = append(throttled, f.Name)
		}
	}
	if len(throttled) > 0 {
		t.Errorf("functions with routes and no route throttle: %v", throttled)
	}
}
