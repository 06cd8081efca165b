package dynamo_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	callsvc "github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/calls/outboundapi"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// countingSQS counts SendMessage calls.
type countingSQS struct {
	*sqs.Client
	mu    sync.Mutex
	sends int
}

func (c *countingSQS) SendMessage(ctx context.Context, in *sqs.SendMessageInput, o ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	c.mu.Lock()
	c.sends++
	c.mu.Unlock()
	return c.Client.SendMessage(ctx, in, o...)
}

type placed struct {
	mu    sync.Mutex
	calls []telephony.CallRequest
}

func (p *placed) Place(_ context.Context, req telephony.CallRequest) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, req)
	return nil
}

// TestOutboundOnDynamoAndSQS runs the deployed path on moto: the trigger is
// one DynamoDB write and one SQS message; the dialer, fed what SQS hands
// out, reserves a slot on the calls table, claims the call and places it.
func TestOutboundOnDynamoAndSQS(t *testing.T) {
	c := client(t)
	db := &countingDB{DB: c}
	names := newTables(t, c)
	stores := dynamo.NewStores(db, names)
	ctx := context.Background()
	sq := &countingSQS{Client: awstest.SQS(t)}
	url, _, err := queue.CreateQueues(ctx, sq.Client, queue.QueueSpec{Name: "test-outbound-" + strings.ToLower(voiceops.RandomBase62(8)), Visibility: 30 * time.Second, MaxReceives: 5})
	if err != nil {
		t.Fatal(err)
	}
	prov := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.RegionUS, Now: time.Now}
	if _, err := prov.CreateAccount(ctx, "acct_out", "out"); err != nil {
		t.Fatal(err)
	}
	if _, err := prov.CreateProject(ctx, "acct_out", "proj_out", "out"); err != nil {
		t.Fatal(err)
	}
	key, _, err := prov.CreateKey(ctx, voiceops.KeyService, "acct_out", "proj_out")
	if err != nil {
		t.Fatal(err)
	}
	calls := dynamo.NewCalls(db, names.Calls)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := httpapi.New(httpapi.Config{Keys: auth.New(stores.Accounts, voiceops.RegionUS, time.Now), Now: time.Now, Log: log},
		(&outboundapi.Outbound{Calls: callsvc.New(calls, time.Now, callsvc.WithDial(&dialer.SQSQueue{Client: sq, URL: url})), ValidNumber: func(string) bool { return true },
			ValidCountry: func(string) bool { return true },
			Destinations: &destination.Checker{Policies: dynamo.NewConfig(db, names.Config, ""), Region: voiceops.RegionUS,
				Classify: func(string) destination.Number {
					return destination.Number{Country: "US", Type: destination.FixedLineOrMobile}
				}},
		}).Routes())
	do := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-Service-Auth-Token", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	// Warm the key cache.
	if st, _ := do("GET", "/v1/outbound-calling/"+voiceops.NewCallSID()+"/status", ""); st != 404 {
		t.Fatalf("warm-up: %d", st)
	}
	db.take()
	st, body := do("POST", "/v1/outbound-calling/trigger", `{"to_number":"+14155550100","metadata":{"first_name":"Ada"}}`)
	if st != 200 {
		t.Fatalf("trigger: %d %s", st, body)
	}
	// The account's destination policy (GetItem), the call (PutItem).
	if got := db.take(); !maps.Equal(got, map[string]int{"GetItem": 1, "PutItem": 1}) || sq.sends != 1 {
		t.Errorf("trigger made %v and %d SendMessage, want one GetItem, one PutItem and one SendMessage", got, sq.sends)
	}
	var out struct{ CallSid string }
	_ = json.Unmarshal([]byte(body), &out)

	// What SQS hands the dialer's event source.
	rec, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	if err != nil || len(rec.Messages) != 1 {
		t.Fatalf("receive: %v %d messages", err, len(rec.Messages))
	}
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: aws.ToString(rec.Messages[0].MessageId), Body: aws.ToString(rec.Messages[0].Body)}}}
	p := &placed{}
	d := &dialer.Dialer{Calls: callsvc.New(calls, time.Now), Pacer: dynamo.NewPacer(db, names.Calls), Queue: &dialer.SQSQueue{Client: sq, URL: url}, Provider: p,
		Now: time.Now, Sleep: dialer.SleepContext, Log: log}
	res, err := d.HandleSQS(ctx, ev)
	if err != nil || len(res.BatchItemFailures) != 0 {
		t.Fatalf("dialer: %v %+v", err, res)
	}
	if len(p.calls) != 1 || p.calls[0].SID != out.CallSid || p.calls[0].Metadata["first_name"] != "Ada" {
		t.Errorf("placed %+v", p.calls)
	}
	call, err := calls.GetCall(ctx, out.CallSid, time.Now())
	if err != nil || call.Status != voiceops.CallCalling {
		t.Errorf("call after dialing: %+v %v", call, err)
	}
	// The same job again (SQS delivers at least once): never dialed twice.
	if res, err := d.HandleSQS(ctx, ev); err != nil || len(res.BatchItemFailures) != 0 || len(p.calls) != 1 {
		t.Errorf("redelivery: %v %+v, placed %d", err, res, len(p.calls))
	}
}
