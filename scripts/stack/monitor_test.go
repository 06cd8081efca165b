package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/scripts/stack/alarms"
	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/scripts/stack/sns"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// The template's alarms resolve against the stack's physical names, and
// the topics of their actions are listed once.
func TestReadAlarms(t *testing.T) {
	var tmpl cfn.Template
	if err := json.Unmarshal([]byte(`{"Resources":{
		"Fn": {"Type":"AWS::Lambda::Function","Properties":{}},
		"Topic": {"Type":"AWS::SNS::Topic","Properties":{}},
		"Errs": {"Type":"AWS::CloudWatch::Alarm","Properties":{"AlarmName":"s-Errors","MetricName":"Errors","Namespace":"AWS/Lambda",
			"Dimensions":[{"Name":"FunctionName","Value":{"Ref":"Fn"}}],"Statistic":"Sum","Period":300,"EvaluationPeriods":1,
			"ComparisonOperator":"GreaterThanThreshold","Threshold":0,"AlarmActions":[{"Ref":"Topic"}],"OKActions":[{"Ref":"Topic"}]}},
		"Rate": {"Type":"AWS::CloudWatch::Alarm","Properties":{"Metrics":[{"Id":"r","Expression":"RATE(m)","ReturnData":true},
			{"Id":"m","ReturnData":false,"MetricStat":{"Metric":{"MetricName":"Errors","Namespace":"AWS/Lambda"},"Period":60,"Stat":"Sum"}}],
			"EvaluationPeriods":1,"ComparisonOperator":"GreaterThanThreshold","Threshold":0}}
	}}`), &tmpl); err != nil {
		t.Fatal(err)
	}
	v := cfn.NewValues("123456789012", "us-east-1", "S")
	v.Set("Fn", "s-fn", nil)
	v.Set("Topic", "arn:aws:sns:us-east-1:123456789012:s-topic", nil)
	as, unread, err := readAlarms(tmpl, v)
	if err != nil || len(unread) != 1 || !strings.Contains(unread[0].Error(), "RATE") {
		t.Fatalf("%v; unread %v, want the RATE alarm", err, unread)
	}
	if len(as) != 1 || as[0].Metrics()[0].Metric != alarms.NewMetric("AWS/Lambda", "Errors", map[string]string{"FunctionName": "s-fn"}) {
		t.Fatalf("alarms %+v", as)
	}
	if got := actionTopics(as); len(got) != 1 || got[0] != "arn:aws:sns:us-east-1:123456789012:s-topic" {
		t.Fatalf("topics %v", got)
	}
}

// Lambda's and API Gateway's metrics land under the names and dimensions
// the template's alarms read; an EMF line's metrics under the catalog's.
func TestMonitorRecordsServiceAndEMFMetrics(t *testing.T) {
	m := newMonitor(nil, 1, sns.Client{}, "123456789012", "us-east-1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.invocation("s-fn", 1500*time.Millisecond, true)
	m.invocation("s-fn", 500*time.Millisecond, false)
	h := m.measured("api1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			http.Error(w, "x", http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	for _, p := range []string{"/ok", "/bad"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	m.emf([]byte(`{"_aws":{"CloudWatchMetrics":[{"Namespace":"VoiceOps","Dimensions":[["Source"]],"Metrics":[{"Name":"EvaluationLag"}]}]},"EvaluationLag":[70000,10],"Source":"stream"}`))
	m.tableThrottled("cfg", true)
	from, to := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	sum := func(ns, name string, dims map[string]string) float64 {
		v, _ := alarms.Statistic("Sum", m.store.Values(alarms.NewMetric(ns, name, dims), from, to))
		return v
	}
	fn := map[string]string{"FunctionName": "s-fn"}
	api := map[string]string{"ApiId": "api1"}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"Invocations", sum("AWS/Lambda", "Invocations", fn), 2},
		{"Errors", sum("AWS/Lambda", "Errors", fn), 1},
		{"Duration", sum("AWS/Lambda", "Duration", fn), 2000},
		{"Count", sum("AWS/ApiGateway", "Count", api), 2},
		{"5xx", sum("AWS/ApiGateway", "5xx", api), 1},
		{"4xx", sum("AWS/ApiGateway", "4xx", api), 0},
		{"Count by stage", sum("AWS/ApiGateway", "Count", map[string]string{"ApiId": "api1", "Stage": "$default"}), 2},
		{"EvaluationLag", sum("VoiceOps", "EvaluationLag", map[string]string{"Source": "stream"}), 70010},
		{"WriteThrottleEvents", sum("AWS/DynamoDB", "WriteThrottleEvents", map[string]string{"TableName": "cfg"}), 1},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// tailLogs hands over each complete line once, including one written in
// two parts.
func TestTailLogs(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "alerts.log")
	if err := os.WriteFile(path, []byte("one\ntw"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 10)
	go tailLogs(ctx, dir, []string{"alerts", "absent"}, func(b []byte) { got <- string(b) })
	if l := <-got; l != "one" {
		t.Fatalf("first line %q", l)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("o\nthree\n")
	f.Close()
	for _, want := range []string{"two", "three"} {
		select {
		case l := <-got:
			if l != want {
				t.Fatalf("line %q, want %q", l, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("no line %q", want)
		}
	}
}

// A state change reaches an SQS queue subscribed to the alarm's topic, as
// CloudWatch's notification in SNS's envelope; the queue's depth is
// sampled under the alarm's metric.
func TestMonitorPublishesAndSamplesOnMoto(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	c := sns.Client{Endpoint: endpoint, Region: "us-east-1"}
	suffix := fmt.Sprint(time.Now().UnixNano())
	topic, err := c.CreateTopic(ctx, "alarms-"+suffix)
	if err != nil {
		t.Fatal(err)
	}
	inbox, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("inbox-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dlq-" + suffix)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, topic, "sqs", "arn:aws:sqs:us-east-1:123456789012:inbox-"+suffix, nil); err != nil {
		t.Fatal(err)
	}
	a, err := alarms.Parse("DLQ", map[string]any{"AlarmName": "dlq-" + suffix, "MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS",
		"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": "dlq-" + suffix}}, "Statistic": "Maximum", "Period": 60.0,
		"EvaluationPeriods": 1.0, "ComparisonOperator": "GreaterThanThreshold", "Threshold": 0.0, "TreatMissingData": "notBreaching",
		"AlarmActions": []any{topic}, "OKActions": []any{topic}})
	if err != nil {
		t.Fatal(err)
	}
	m := newMonitor([]*alarms.Alarm{a}, 60, c, "123456789012", "us-east-1", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: dlq.QueueUrl, MessageBody: aws.String("dead")}); err != nil {
		t.Fatal(err)
	}
	go m.sampleQueues(ctx, q, map[string]string{"dlq-" + suffix: *dlq.QueueUrl})
	go m.run(ctx)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: inbox.QueueUrl, WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range out.Messages {
			var env struct{ Subject, Message string }
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &env); err != nil {
				t.Fatal(err)
			}
			var n alarms.Notification
			if err := json.Unmarshal([]byte(env.Message), &n); err != nil {
				t.Fatal(err)
			}
			if n.NewStateValue == alarms.Alarming {
				if n.AlarmName != "dlq-"+suffix || n.Trigger.MetricName != "ApproximateNumberOfMessagesVisible" || !strings.HasPrefix(env.Subject, "ALARM: ") {
					t.Errorf("notification %+v (subject %q)", n, env.Subject)
				}
				return
			}
		}
	}
	t.Fatalf("no ALARM notification within 15 s; changes %+v", m.Changes())
}

// An alarm that counts missing data as breaching is set aside when the
// schedules fire less often than its period on the alarms' clock, and
// evaluated when they keep up; other alarms are always evaluated.
func TestSplitUnevaluable(t *testing.T) {
	missing := &alarms.Alarm{Name: "ScheduleMissing", Period: time.Minute, TreatMissingData: alarms.Breaching}
	errs := &alarms.Alarm{Name: "Errors", Period: time.Minute, TreatMissingData: alarms.NotBreaching}
	rate := []esm.Schedule{{Every: time.Minute}}
	for _, tt := range []struct {
		every time.Duration
		scale float64
		want  []string // set aside
	}{
		{0, 1, nil},                          // the rules' rates, real time: as deployed
		{0, 60, []string{"ScheduleMissing"}}, // a one-minute rate is an hour on the clock
		{2 * time.Second, 60, []string{"ScheduleMissing"}},
		{time.Second, 60, nil},
		{2 * time.Second, 30, nil},
	} {
		keep, out := splitUnevaluable([]*alarms.Alarm{missing, errs}, rate, tt.every, tt.scale)
		var got []string
		for _, u := range out {
			got = append(got, u.Alarm.Name)
			if !strings.Contains(u.Reason, "-alarm-time-scale") {
				t.Errorf("reason %q does not say which flags", u.Reason)
			}
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") || len(keep)+len(out) != 2 {
			t.Errorf("every %s, scale %g: set aside %v, want %v (kept %d)", tt.every, tt.scale, got, tt.want, len(keep))
		}
	}
}
