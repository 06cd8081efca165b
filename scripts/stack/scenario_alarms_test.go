//go:build stack

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/stack/alarms"
	"github.com/voiceops/opsapi/scripts/stack/sns"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
)

// alarmInbox is an SQS queue subscribed to every alarm topic of the
// stack: the notifications a person would be paged with.
type alarmInbox struct {
	q   *sqs.Client
	url string

	mu   sync.Mutex
	got  []alarms.Notification // in order of arrival
	used map[string]int        // alarm → index after its last match
	base int                   // the runner's changes before the watch
}

// watchAlarms subscribes a new queue to the alarms' topics. Notifications
// of changes before the call are not in it.
func watchAlarms(t *testing.T) *alarmInbox {
	t.Helper()
	if len(st.AlarmTopics) == 0 {
		t.Fatal("no alarm of the template has an action")
	}
	ctx := context.Background()
	q := sqs.NewFromConfig(st.AWS)
	name := fmt.Sprintf("alarm-inbox-%d", time.Now().UnixNano())
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range st.AlarmTopics {
		c := sns.Client{Endpoint: st.MotoURL, Region: sns.Region(topic)}
		if _, err := c.Subscribe(ctx, topic, "sqs", attrs.Attributes["QueueArn"], nil); err != nil {
			t.Fatalf("subscribing to %s: %v", topic, err)
		}
	}
	return &alarmInbox{q: q, url: *out.QueueUrl, used: map[string]int{}, base: len(st.monitor.Changes())}
}

// alarmNamed returns the name of the template's alarm whose name ends in
// "-"+suffix (its construct ID), e.g. "DynamoDBThrottlesConfig".
func alarmNamed(t testing.TB, suffix string) string {
	t.Helper()
	all := slices.Clone(st.Alarms.Alarms)
	for _, u := range st.Unevaluable {
		all = append(all, u.Alarm)
	}
	for _, a := range all {
		if strings.HasSuffix(a.Name, "-"+suffix) || a.Name == suffix {
			return a.Name
		}
	}
	t.Fatalf("the template has no alarm %s", suffix)
	return ""
}

// wait returns the alarm's next notification of entering state (after
// the one the last wait for the alarm returned), failing the test after
// within. An alarm with no action for that state notifies nobody: its
// change is then read from the runner's evaluator.
func (in *alarmInbox) wait(t testing.TB, alarm string, state alarms.State, within time.Duration) alarms.Notification {
	t.Helper()
	deadline := time.Now().Add(within)
	if a := st.Alarms.Alarm(alarm); a != nil && len(a.Actions(state)) == 0 {
		t.Logf("alarm %s has no action for %s: its change is read from the runner", alarm, state)
		for {
			changes := st.monitor.Changes()
			in.mu.Lock()
			for i := max(in.base, in.used["change:"+alarm]); i < len(changes); i++ {
				if c := changes[i]; c.Alarm.Name == alarm && c.New == state {
					in.used["change:"+alarm] = i + 1
					in.mu.Unlock()
					return c.Notification(account, "")
				}
			}
			in.mu.Unlock()
			if time.Now().After(deadline) {
				t.Fatalf("alarm %s did not go to %s within %s (state %s; changes %s)", alarm, state, within, st.Alarms.State(alarm), changesOf(alarm))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		in.mu.Lock()
		for i := in.used[alarm]; i < len(in.got); i++ {
			if n := in.got[i]; n.AlarmName == alarm && n.NewStateValue == state {
				in.used[alarm] = i + 1
				in.mu.Unlock()
				return n
			}
		}
		in.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("alarm %s did not go to %s within %s (state %s; changes %s)", alarm, state, within, st.Alarms.State(alarm), changesOf(alarm))
		}
		out, err := in.q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &in.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var env struct{ Type, Message string }
			var n alarms.Notification
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil || env.Type != "Notification" {
				t.Fatalf("not an SNS notification: %s", aws.ToString(m.Body))
			}
			if err := json.Unmarshal([]byte(env.Message), &n); err != nil {
				t.Fatalf("not CloudWatch's alarm notification: %s", env.Message)
			}
			in.mu.Lock()
			in.got = append(in.got, n)
			in.mu.Unlock()
			_, _ = in.q.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &in.url, ReceiptHandle: m.ReceiptHandle})
		}
	}
}

func changesOf(alarm string) string {
	var out []string
	for _, c := range st.monitor.Changes() {
		if c.Alarm.Name == alarm {
			out = append(out, fmt.Sprintf("%s→%s %v", c.Old, c.New, c.Datapoints))
		}
	}
	return strings.Join(out, "; ")
}

// fault injects a fault until the test (or the caller, through the
// returned function) ends it; ending it twice is harmless.
func fault(t *testing.T, on, off func()) (end func()) {
	t.Helper()
	var once sync.Once
	end = func() { once.Do(off) }
	on()
	t.Cleanup(end)
	return end
}

// The fault injections a scenario composes.
func denyAction(t *testing.T, function, action string) func() {
	return fault(t, func() { st.Proxy.Deny(function, action) }, func() { st.Proxy.Allow(function, action) })
}

func throttleDynamoDB(t *testing.T, function string) func() {
	return fault(t, func() { st.Proxy.SetThrottle(function, true) }, func() { st.Proxy.SetThrottle(function, false) })
}

func throttleLambda(t *testing.T, function string) func() {
	return fault(t, func() { st.SetThrottled(function, true) }, func() { st.SetThrottled(function, false) })
}

// killWhenBusy kills the function's running invocations as soon as it
// has one, within the time given, and returns how many it killed.
func killWhenBusy(function string, within time.Duration) int {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		// An invocation holds its slot while its environment starts: kill
		// once there is a process to kill.
		if st.Runner.Busy(function) > 0 {
			if n := st.Runner.Kill(function); n > 0 {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}

// Every alarm of the template reads a metric something produces: a
// service metric the runner computes (as the service would publish it),
// or one of the telemetry catalog's, which the functions write as EMF
// lines. An alarm on a metric nothing produces would never fire.
func TestEveryAlarmMetricIsProduced(t *testing.T) {
	if len(st.Alarms.Alarms) == 0 {
		t.Fatal("the template has no alarm")
	}
	for _, err := range st.UnreadAlarms {
		t.Errorf("not evaluated: %v", err)
	}
	var own []string
	for _, m := range telemetry.Catalog() {
		own = append(own, m.Name)
	}
	all := slices.Clone(st.Alarms.Alarms)
	for _, u := range st.Unevaluable {
		all = append(all, u.Alarm)
	}
	for _, a := range all {
		for _, m := range a.Metrics() {
			switch {
			case m.Metric.Namespace == telemetry.Namespace && slices.Contains(own, m.Metric.Name):
			case IsServiceMetric(m.Metric.Namespace, m.Metric.Name):
			default:
				t.Errorf("alarm %s reads %s, which nothing produces", a.Name, m.Metric)
			}
		}
		if len(a.Actions(alarms.Alarming)) == 0 || len(a.Actions(alarms.OK)) == 0 {
			t.Errorf("alarm %s lacks an ALARM or OK action: nobody would know", a.Name)
		}
	}
}

// A dead letter in the metrics stream's on-failure queue pages: its alarm
// goes to ALARM and notifies the topic with CloudWatch's message; once
// the letter is dealt with, the alarm goes back to OK and notifies again.
func TestDeadLetterAlarmFiresAndClears(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "MetricsStreamFailuresNotEmpty")
	a := st.Alarms.Alarm(name)
	queue := a.Metrics()[0].Metric.Dimensions()["QueueName"]
	q := sqs.NewFromConfig(st.AWS)
	ctx := context.Background()
	u, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &queue})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: u.QueueUrl, MessageBody: aws.String(`{"DDBStreamBatchInfo":{}}`)}); err != nil {
		t.Fatal(err)
	}
	n := inbox.wait(t, name, alarms.Alarming, 30*time.Second)
	if n.Trigger.MetricName != "ApproximateNumberOfMessagesVisible" || n.Trigger.Namespace != "AWS/SQS" || n.AWSAccountId != account ||
		!strings.HasPrefix(n.NewStateReason, "Threshold Crossed: 1 out of the last 1 datapoints [1]") {
		t.Errorf("notification %+v", n)
	}
	if _, err := q.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: u.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if n := inbox.wait(t, name, alarms.OK, 30*time.Second); n.OldStateValue != alarms.Alarming {
		t.Errorf("back to OK from %s", n.OldStateValue)
	}
}

// DynamoDB throttles one function's calls for a while: its requests fail
// (not acknowledged) or pass after the SDK's retries; the table's
// throttle alarm fires and clears; every rule the API acknowledged is
// stored.
func TestDynamoDBThrottlingAlarmsAndLosesNothing(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "DynamoDBThrottlesConfig")
	acct := st.Credentials.Accounts[0]
	key := map[string]string{"x-api-key": acct.APIKey}
	create := func(i int) (string, bool) {
		var r struct{ ID string }
		code, _, _ := call(t, "POST", st.Credentials.AgentStudioURL+"/v1/alert-rules", key, map[string]any{"name": fmt.Sprintf("throttled %d", i),
			"project_id": acct.Projects[1].ProjectID, "metric": "api_errors", "operator": ">=", "threshold_value": 1000, "window_duration": "5m"}, &r)
		if code == http.StatusCreated {
			t.Cleanup(func() { call(t, "DELETE", st.Credentials.AgentStudioURL+"/v1/alert-rules/"+r.ID, key, nil, nil) })
		}
		return r.ID, code == http.StatusCreated
	}
	var acked []string
	end := throttleDynamoDB(t, "alerts")
	// Creates until the alarm fires: it wants throttles in 3 of 5
	// alarm-minutes (a second each at scale 60), one is noise, and a
	// create's SDK retries may hold it for several.
	i := 0
	for start := time.Now(); st.Alarms.State(name) != alarms.Alarming && time.Since(start) < 60*time.Second; i++ {
		if id, ok := create(i); ok {
			acked = append(acked, id)
		}
		time.Sleep(300 * time.Millisecond)
	}
	inbox.wait(t, name, alarms.Alarming, 60*time.Second)
	end()
	for j := i; j < i+2; j++ {
		id, ok := create(j)
		if !ok {
			t.Fatalf("a create after the throttle ended was refused")
		}
		acked = append(acked, id)
	}
	inbox.wait(t, name, alarms.OK, 60*time.Second)
	var list struct{ Data []struct{ ID string } }
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", key, nil, &list); code != 200 {
		t.Fatalf("listing: %d %s", code, b)
	}
	for _, id := range acked {
		if !slices.ContainsFunc(list.Data, func(r struct{ ID string }) bool { return r.ID == id }) {
			t.Errorf("acknowledged rule %s is not stored", id)
		}
	}
}

// Lambda throttles a function for a while: the API answers an error, the
// function's Throttles alarm fires and, once it runs again, clears.
func TestLambdaThrottlesAlarm(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "AlertsThrottles")
	key := map[string]string{"x-api-key": st.Credentials.Accounts[0].APIKey}
	end := throttleLambda(t, "alerts")
	// Requests for five alarm-minutes: throttles in 3 of 5 minutes page.
	for start := time.Now(); time.Since(start) < 5*time.Second; {
		if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", key, nil, nil); code/100 != 5 {
			t.Fatalf("a throttled function answered %d %s", code, b)
		}
		time.Sleep(300 * time.Millisecond)
	}
	inbox.wait(t, name, alarms.Alarming, 60*time.Second)
	end()
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", key, nil, nil); code != 200 {
		t.Fatalf("after the throttle: %d %s", code, b)
	}
	inbox.wait(t, name, alarms.OK, 60*time.Second)
}

// A poison record on the metrics stream (an item whose key names no metric
// scope, which the evaluator reports as failed every time) does not hold
// its shard: the records after it are evaluated and the alert they raise
// is delivered; after the retries it reaches the stream's on-failure
// queue, whose alarm pages; the person paged reads the shard and sequence
// numbers from the message and deletes it, and the alarm clears.
func TestPoisonStreamRecordPagesAndBlocksNothing(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "MetricsStreamFailuresNotEmpty")
	// A project no other scenario counts errors of.
	acct := st.Credentials.Accounts[0]
	proj := acct.Projects[1]
	rc, _ := alertSetupOn(t, acct, proj)
	ctx := context.Background()
	db := dynamodb.NewFromConfig(st.AWS)
	table := st.Topology.TableNames().Metrics
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: map[string]dtypes.AttributeValue{
		tables.Metrics.PartitionKey: &dtypes.AttributeValueMemberS{Value: "M#"},
		tables.Metrics.SortKey:      &dtypes.AttributeValueMemberS{Value: "poison"},
	}}); err != nil {
		t.Fatal(err)
	}
	postErrorsOn(t, acct, proj, 5)
	if d := rc.next(t, "alerts.triggered", 30*time.Second); d.Verified != nil {
		t.Fatalf("alerts.triggered not verified: %v", d.Verified)
	}
	inbox.wait(t, name, alarms.Alarming, 60*time.Second)
	queue := st.Alarms.Alarm(name).Metrics()[0].Metric.Dimensions()["QueueName"]
	q := sqs.NewFromConfig(st.AWS)
	u, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &queue})
	if err != nil {
		t.Fatal(err)
	}
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
	if err != nil || len(out.Messages) == 0 {
		t.Fatalf("the on-failure queue: %v %v", out, err)
	}
	for _, m := range out.Messages {
		var info struct {
			RequestContext     struct{ Condition string }
			DDBStreamBatchInfo struct{ StartSequenceNumber, EndSequenceNumber string }
		}
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &info); err != nil || info.DDBStreamBatchInfo.StartSequenceNumber == "" ||
			info.RequestContext.Condition != "RetryAttemptsExhausted" {
			t.Errorf("on-failure message %s: %v", aws.ToString(m.Body), err)
		}
		if _, err := q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: u.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	inbox.wait(t, name, alarms.OK, 60*time.Second)
}

// A function's process killed in the middle of an invocation, in three
// alarm-minutes (errors in 3 of 5 minutes page; one is noise): each
// request it served answers API Gateway's 500, the invocation counts in
// the function's Errors, whose alarm fires; the next request starts a new
// environment and answers, and the alarm clears.
func TestKilledInvocationAlarms(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "AlertsErrors")
	key := map[string]string{"x-api-key": st.Credentials.Accounts[0].APIKey}
	t.Cleanup(func() { st.Proxy.SetDelay("alerts", 0) })
	for i := range 3 {
		st.Proxy.SetDelay("alerts", 3*time.Second) // holds the invocation while it is killed
		answered := make(chan int, 1)
		go func() { // not call: t.Fatal belongs to the test's goroutine
			req, _ := http.NewRequest("GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", nil)
			req.Header.Set("x-api-key", key["x-api-key"])
			resp, err := scenarioClient.Do(req)
			if err != nil {
				answered <- 0
				return
			}
			resp.Body.Close()
			answered <- resp.StatusCode
		}()
		if n := killWhenBusy("alerts", 5*time.Second); n == 0 {
			t.Fatalf("crash %d: alerts never had a running invocation to kill", i+1)
		}
		st.Proxy.SetDelay("alerts", 0)
		if code := <-answered; code != http.StatusInternalServerError {
			t.Fatalf("crash %d: the killed invocation's request answered %d, want 500", i+1, code)
		}
		time.Sleep(1100 * time.Millisecond) // the next alarm-minute
	}
	inbox.wait(t, name, alarms.Alarming, 60*time.Second)
	if code, _, b := call(t, "GET", st.Credentials.AgentStudioURL+"/v1/alert-rules", key, nil, nil); code != 200 {
		t.Fatalf("after the crash: %d %s", code, b)
	}
	inbox.wait(t, name, alarms.OK, 60*time.Second)
}
