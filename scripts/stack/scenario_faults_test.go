//go:build stack

package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/scripts/stack/alarms"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The scenarios run the template as deployed by default: every alarm
// notifies the stack's own topic on ALARM and on OK. The schedule alarm
// counts missing data as breaching; the scenarios' schedule (every 2 s,
// two minutes on the alarms' clock at scale 60) is slower than its
// one-minute period, so the runner sets it aside rather than page
// falsely, and it never changes state.
func TestAlarmTopicAndScheduleAlarmInScenarios(t *testing.T) {
	if len(st.AlarmTopics) != 1 || !strings.HasSuffix(st.AlarmTopics[0], ":voiceops-us-alarms") {
		t.Errorf("alarm topics %v, want the template's own voiceops-us-alarms", st.AlarmTopics)
	}
	name := alarmNamed(t, "EvaluatorScheduleMissing")
	if !slices.ContainsFunc(st.Unevaluable, func(u Unevaluable) bool { return u.Alarm.Name == name }) || st.Alarms.Alarm(name) != nil {
		t.Errorf("%s is evaluated with a schedule slower than its period", name)
	}
	if c := changesOf(name); c != "" {
		t.Errorf("%s changed state: %s", name, c)
	}
}

// pendingEvent waits for the alert event of a rule to be pending in the
// outbox (written, not fanned out) and returns it.
func pendingEvent(t *testing.T, accountID, ruleID string, within time.Duration) voiceops.AlertEvent {
	t.Helper()
	store := dynamo.NewDeliveries(dynamodb.NewFromConfig(st.AWS), st.Topology.TableNames().Deliveries)
	deadline := time.Now().Add(within)
	for {
		evs, err := store.PendingEvents(context.Background(), time.Now().Add(time.Hour), 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.AccountID == accountID && ev.RuleID == ruleID {
				return ev
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending event of rule %s within %s", ruleID, within)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// backdate moves a pending event's creation time back by d. The repair
// takes events pending for over a minute and its alarm fires past two
// (real time: the alarm clock's scale does not change the ages the
// evaluator measures), so this stands in for waiting that long. The keys
// are the outbox layout of shared/store/dynamo/events.go.
func backdate(t *testing.T, ev voiceops.AlertEvent, d time.Duration) {
	t.Helper()
	at := ev.CreatedAt.Add(-d).UTC()
	gsi := tables.Deliveries.GSIs[0]
	_, err := dynamodb.NewFromConfig(st.AWS).UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Topology.TableNames().Deliveries),
		Key: map[string]dtypes.AttributeValue{
			tables.Deliveries.PartitionKey: &dtypes.AttributeValueMemberS{Value: "EVT#" + ev.AccountID},
			tables.Deliveries.SortKey:      &dtypes.AttributeValueMemberS{Value: ev.ID},
		},
		UpdateExpression:         aws.String("SET #c = :c, #sk = :sk"),
		ConditionExpression:      aws.String("attribute_exists(#pk)"), // still pending
		ExpressionAttributeNames: map[string]string{"#c": "created_at", "#sk": gsi.SortKey, "#pk": gsi.PartitionKey},
		ExpressionAttributeValues: map[string]dtypes.AttributeValue{
			":c":  &dtypes.AttributeValueMemberS{Value: at.Format(time.RFC3339Nano)},
			":sk": &dtypes.AttributeValueMemberS{Value: at.Format("2006-01-02T15:04:05.000000000Z") + "#" + ev.ID},
		},
	})
	if err != nil {
		t.Fatalf("backdating event %s: %v", ev.ID, err)
	}
}

// deliveriesOf collects the receiver's deliveries for a while and counts
// them by event ID.
func deliveriesOf(rc *receiver, d time.Duration) map[string]int {
	n := map[string]int{}
	deadline := time.Now().Add(d)
	for {
		select {
		case x := <-rc.got:
			n[x.EventID]++
		default:
			if time.Now().After(deadline) {
				return n
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// SendMessage denied to the evaluator for a while: a breach's alert event
// is written but stays pending (no delivery); the evaluator's runs fail,
// so its Errors alarm fires, and the repair's PendingEventAgeRepair fires
// once the event is old; once allowed, the next repair fans it out, the
// receiver gets it exactly once, and both alarms clear.
func TestSendMessageDeniedPagesAndDeliversOnce(t *testing.T) {
	inbox := watchAlarms(t)
	errorsAlarm, pendingAlarm := alarmNamed(t, "EvaluatorErrors"), alarmNamed(t, "PendingEventAgeRepair")
	// A project no other scenario posts errors to.
	acct := st.Credentials.Accounts[1]
	proj := acct.Projects[1]
	rc, ruleID := alertSetupOn(t, acct, proj)
	end := denyAction(t, "evaluator", "sqs:SendMessage")
	// Errors of 4.5 minutes ago: in the rule's 5-minute window now, out of
	// it before the later scenarios create rules on this project.
	code, _, b := call(t, "POST", st.Credentials.AgentStudioURL+"/internal/v1/metric-events", map[string]string{"X-Internal-Key": st.Credentials.InternalKey},
		map[string]any{"events": []map[string]any{{"account_id": acct.AccountID, "project_id": proj.ProjectID, "metric": "api_errors", "value": 5,
			"at": time.Now().Add(-270 * time.Second).UTC().Format(time.RFC3339)}}}, nil)
	if code/100 != 2 { // acknowledged: the intake answered 2xx
		t.Fatalf("metric intake: %d %s", code, b)
	}
	ev := pendingEvent(t, acct.AccountID, ruleID, 30*time.Second)
	backdate(t, ev, 3*time.Minute)
	inbox.wait(t, errorsAlarm, alarms.Alarming, 60*time.Second)
	n := inbox.wait(t, pendingAlarm, alarms.Alarming, 60*time.Second)
	if n.Trigger.MetricName != "PendingEventAge" || n.Trigger.Namespace != "VoiceOps" {
		t.Errorf("notification %+v", n)
	}
	if got := deliveriesOf(rc, 0); got[ev.ID] > 0 {
		t.Fatalf("event %s delivered while SendMessage was denied", ev.ID)
	}
	end()
	d := rc.next(t, "alerts.triggered", 30*time.Second)
	if d.Verified != nil || d.EventID != ev.ID {
		t.Fatalf("delivery of %s (verified: %v), want the pending event %s", d.EventID, d.Verified, ev.ID)
	}
	inbox.wait(t, pendingAlarm, alarms.OK, 60*time.Second)
	inbox.wait(t, errorsAlarm, alarms.OK, 60*time.Second)
	// The repair ran several times since: still one delivery.
	if got := deliveriesOf(rc, 2*time.Second); got[ev.ID] != 0 {
		t.Errorf("event %s delivered %d more times", ev.ID, got[ev.ID])
	}
}

// The dispatcher's process killed in the middle of a batch, three times:
// the batch is not acknowledged (nothing claimed, nothing sent), its
// message comes back after the queue's visibility timeout and is then
// delivered exactly once; the dispatcher's Errors alarm fires and clears.
func TestDispatcherKilledMidBatchRedeliversOnce(t *testing.T) {
	inbox := watchAlarms(t)
	name := alarmNamed(t, "DispatcherErrors")
	acct := st.Credentials.Accounts[0]
	proj := acct.Projects[0]
	rc, _ := alertSetupOn(t, acct, proj)
	var mu sync.Mutex
	inFlight := map[string]string{} // receipt handle → queue ARN, of the dispatcher's batches
	st.ObserveInvocations(func(fn string, payload []byte) {
		var ev events.SQSEvent
		if fn != "dispatcher" || json.Unmarshal(payload, &ev) != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			inFlight[r.ReceiptHandle] = r.EventSourceARN
		}
	})
	t.Cleanup(func() { st.ObserveInvocations(nil) })
	// Every AWS call of the dispatcher waits: an invocation is killed at
	// its first one, before it claims or sends anything.
	st.Proxy.SetDelay("dispatcher", 10*time.Second)
	t.Cleanup(func() { st.Proxy.SetDelay("dispatcher", 0) })
	q := sqs.NewFromConfig(st.AWS)
	// The delivery queue's visibility timeout is minutes: making the
	// killed batch's messages visible stands in for its expiry.
	redeliver := func() {
		mu.Lock()
		defer mu.Unlock()
		for h, arn := range inFlight {
			u, err := q.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(arn[strings.LastIndex(arn, ":")+1:])})
			if err == nil {
				// A handle of a batch that was not killed is stale: moto
				// refuses it, and that message needs nothing.
				_, _ = q.ChangeMessageVisibility(context.Background(), &sqs.ChangeMessageVisibilityInput{QueueUrl: u.QueueUrl, ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
			}
			delete(inFlight, h)
		}
	}
	postErrorsOn(t, acct, proj, 5)
	// Three crashes in three alarm-minutes (a second each at scale 60):
	// errors in 3 of 5 minutes page. The message is received 4 times,
	// under the queue's maxReceiveCount of 5 (no dead letter).
	for i := range 3 {
		if killWhenBusy("dispatcher", 30*time.Second) == 0 {
			t.Fatalf("crash %d: the dispatcher never had a running invocation", i+1)
		}
		if got := deliveriesOf(rc, 1100*time.Millisecond); len(got) > 0 {
			t.Fatalf("a killed batch delivered %v", got)
		}
		if i == 2 {
			st.Proxy.SetDelay("dispatcher", 0)
		}
		redeliver()
	}
	d := rc.next(t, "alerts.triggered", 30*time.Second)
	if d.Verified != nil || d.EventID == "" {
		t.Fatalf("redelivered event %q not verified: %v", d.EventID, d.Verified)
	}
	inbox.wait(t, name, alarms.Alarming, 60*time.Second)
	inbox.wait(t, name, alarms.OK, 60*time.Second)
	if got := deliveriesOf(rc, 2*time.Second); got[d.EventID] != 0 {
		t.Errorf("event %s delivered %d more times", d.EventID, got[d.EventID])
	}
}
