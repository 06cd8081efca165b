package roundtrips

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/testsupport/apifixture"
	"github.com/voiceops/opsapi/shared/testsupport/awstest"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Latency is what the proxy adds to every call: about a DynamoDB round trip
// from Lambda, and long enough that parallel calls always overlap.
const Latency = 15 * time.Millisecond

// InternalKey is the region's internal key (X-Internal-Key) in the env's secret.
const InternalKey = "roundtrips-internal-key-0123456789abcdef"

// Twilio is the Twilio account of acct_a in the env's secret.
var Twilio = struct{ SID, Token, From string }{"AC" + strings.Repeat("0", 32), "roundtrips-auth-token", "+15005550006"}

// Env is a region on moto: every table, the queues and secrets, the accounts
// of apifixture.Provision with their keys, and a recording proxy the
// functions reach AWS through.
type Env struct {
	Keys     apifixture.Keys
	Stores   voiceops.Stores
	Config   *dynamo.Config
	Calls    voiceops.CallStore
	Names    dynamo.TableNames
	Recorder *Recorder
	// Events is an events key of acct_a/proj_a1 (X-Api-Key of the events routes).
	Events string
	// Engine is the conversation engine on the env's tables, for fixtures.
	Engine *conversation.Engine
	vars   map[string]string
}

// Getenv is the functions' environment (what infra sets, pointing at moto
// through the proxy).
func (e *Env) Getenv(name string) string { return e.vars[name] }

// NewEnv sets up the region; the test is skipped without the emulator
// (failed in CI: awstest).
func NewEnv(t *testing.T) *Env {
	t.Helper()
	ctx := context.Background()
	cfg, endpoint := awstest.Config(t)
	db := awstest.DynamoDB(t)
	names := awstest.Tables(t, db)
	prefix := strings.TrimSuffix(names.Config, "config")
	rec, err := NewRecorder(endpoint, prefix, Latency)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rec.Close)
	sq := awstest.SQS(t)
	queueURL := func(name string) string {
		url, _, err := queue.CreateQueues(ctx, sq, queue.QueueSpec{Name: prefix + name, Visibility: 30 * time.Second, MaxReceives: 5})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}) })
		// The functions reach the queue through the proxy.
		return strings.Replace(url, endpoint, rec.URL, 1)
	}
	sm := secretsmanager.NewFromConfig(cfg, func(o *secretsmanager.Options) { o.BaseEndpoint = aws.String(endpoint) })
	secret := func(name, value string) string {
		if _, err := sm.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: aws.String(prefix + name), SecretString: aws.String(value)}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = sm.DeleteSecret(ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(prefix + name), ForceDeleteWithoutRecovery: aws.Bool(true)})
		})
		return prefix + name
	}
	twilio, _ := json.Marshal(map[string]any{"acct_a": map[string]string{"account_sid": Twilio.SID, "auth_token": Twilio.Token, "from_number": Twilio.From}})
	e := &Env{Names: names, Recorder: rec, vars: map[string]string{
		"SERVICE_REGION": "us", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_ENDPOINT_URL": rec.URL,
		"CONFIG_TABLE":     names.Config, "DELIVERIES_TABLE": names.Deliveries, "METRICS_TABLE": names.Metrics,
		"REQUESTS_TABLE": names.Requests, "CONVERSATIONS_TABLE": names.Conversations, "CALLS_TABLE": names.Calls,
		"DELIVERY_QUEUE_URL": queueURL("deliveries"), "OUTBOUND_QUEUE_URL": queueURL("outbound"),
		"INTERNAL_KEY_PARAMETER": secret("internal", InternalKey), "TWILIO_SECRET": secret("twilio", string(twilio)),
		"PUBLIC_BASE_URL": "https://base.example.com", "CONSOLE_BASE_URL": "https://base.example.com",
		"CONSOLE_URL": "https://studio.example.com/console/",
	}}
	e.Config = dynamo.NewConfig(db, names.Config, names.Deliveries)
	e.Stores = dynamo.NewStores(db, names)
	e.Calls = dynamo.NewCalls(db, names.Calls)
	e.Keys = apifixture.Provision(t, provision.Provisioner{Accounts: e.Stores.Accounts, Region: voiceops.RegionUS, Now: time.Now})
	prov := provision.Provisioner{Accounts: e.Stores.Accounts, Region: voiceops.RegionUS, Now: time.Now}
	if e.Events, _, err = prov.CreateKey(ctx, voiceops.KeyEvents, "acct_a", "proj_a1"); err != nil {
		t.Fatal(err)
	}
	e.Engine = convgraph.New(convgraph.Deps{Conversations: e.Stores.Conversations, Configs: e.Config.AgentConfigs(), DNI: e.Config.DNI(),
		Metrics: metricstore.New(db, names.Metrics), Now: time.Now, Log: slog.New(slog.DiscardHandler)})
	for _, p := range []string{"proj_a1", "proj_a2"} {
		if err := agent.PutConfig(ctx, e.Config.AgentConfigs(), agent.DemoConfig("acct_a", p)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}
