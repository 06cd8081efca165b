// Command dev is the local dev server: every route of both hosts on one
// address, with the embedded in-memory stores by default, or DynamoDB at
// AWS_ENDPOINT_URL (LocalStack, moto) when that is set.
//
//	go run ./scripts/dev [-addr 127.0.0.1:8080] [-credentials FILE [-fresh]] [-eval-every 60s]
//	                     [-allow-loopback-webhooks] [-retry-schedule 0s,1m,5m,15m,1h,4h]
//	                     [-conversation-idle-timeout 30m]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/voiceops/opsapi/shared/alerts/alertgraph"
	"github.com/voiceops/opsapi/shared/alerts/console"
	"github.com/voiceops/opsapi/shared/alerts/delivery"
	"github.com/voiceops/opsapi/shared/alerts/evalgraph"
	"github.com/voiceops/opsapi/shared/alerts/evaluator"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/alerts/webhook"
	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/dialer"
	"github.com/voiceops/opsapi/shared/calls/outboundapi"
	"github.com/voiceops/opsapi/shared/calls/phone"
	"github.com/voiceops/opsapi/shared/calls/simulator"
	"github.com/voiceops/opsapi/shared/calls/telephony"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/calls/twilioapi"
	"github.com/voiceops/opsapi/shared/conversations/chatapi"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/conversationsapi"
	"github.com/voiceops/opsapi/shared/conversations/convgraph"
	"github.com/voiceops/opsapi/shared/conversations/eventsapi"
	"github.com/voiceops/opsapi/shared/conversations/voiceapi"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/ops/demoseed"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/platform/queue"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/platform/tablestream"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/platform/telemetry/prom"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/store/dynamo/metricstore"
	"github.com/voiceops/opsapi/shared/store/memory"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

type options struct {
	addr          string
	credentials   string
	fresh         bool
	region        string
	tablePrefix   string
	allowLoopback bool
	evalEvery     time.Duration
	schedule      webhook.Schedule
	idleTimeout   time.Duration
	// telephony is the outbound calls' provider: simulator or twilio.
	telephony    string
	publicURL    string
	twilioAPIURL string
	// demoData seeds rules, metric events and a conversation (demo.go).
	demoData    bool
	noRateLimit bool
	// apiOnly serves the API's handler straight from net/http, without the
	// dev server's own layers: the baseline that tells what those layers
	// cost (scripts/bench/devbare/pairs.sh).
	apiOnly bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: go run ./scripts/dev [flags]

Serves both hosts of the API on one address with demo accounts, and writes
their credentials as JSON (to -credentials FILE, else to standard output).
With AWS_ENDPOINT_URL set, state lives in DynamoDB there (tables are created
if missing); otherwise in memory. With AWS_ENDPOINT_URL_BEDROCK_RUNTIME (or
AWS_ENDPOINT_URL) set, Bedrock agents are answered there, e.g. by
go run ./scripts/bedrock-standin. Stops cleanly on Ctrl-C.

Example:
  go run ./scripts/dev -credentials creds.json -allow-loopback-webhooks -retry-schedule 0s,1s,2s

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`HOST:PORT` to listen on; requests are answered only for the Host names "+
		"localhost, loopback addresses, HOST and the host of -public-url (others: 421)")
	fs.StringVar(&o.credentials, "credentials", "", "write the demo credentials JSON to `FILE` once the server is ready; "+
		"when FILE already holds them, keep their accounts and keys")
	fs.BoolVar(&o.fresh, "fresh", false, "with -credentials: make new keys even if FILE holds some")
	fs.StringVar(&o.region, "region", "us", "service region the keys are bound to: us, uk or eu")
	fs.StringVar(&o.tablePrefix, "table-prefix", "voiceops-local", "DynamoDB table name prefix (with AWS_ENDPOINT_URL)")
	fs.BoolVar(&o.allowLoopback, "allow-loopback-webhooks", false, "let webhook endpoints use http(s) URLs on loopback addresses, for local receivers")
	fs.DurationVar(&o.evalEvery, "eval-every", time.Minute, "the rule evaluator's period")
	fs.BoolVar(&o.noRateLimit, "no-rate-limit", false, "do not rate-limit API keys (for local load tests, which would otherwise time 429s)")
	fs.BoolVar(&o.apiOnly, "api-only", false, "serve only the API, straight from net/http: no Host check, /metrics, operator endpoint, "+
		"index or OpenAPI document (the baseline of the dev server's own cost, for load tests)")
	fs.BoolVar(&o.demoData, "demo-data", false, "give the first demo account rules, the last 100 minutes of metric events and a chat conversation, for the console")
	fs.DurationVar(&o.idleTimeout, "conversation-idle-timeout", voiceops.DefaultChatIdleTimeout,
		"how long a chat conversation may be idle before the service ends it (projects may configure their own)")
	schedule := fs.String("retry-schedule", webhook.DefaultSchedule.String(), "delays of the delivery attempts, comma-separated `LIST`")
	fs.StringVar(&o.telephony, "telephony", "simulator", "outbound calls' provider: simulator (test numbers, no real call) or twilio "+
		"(real calls with $TWILIO_ACCOUNT_SID, $TWILIO_AUTH_TOKEN and $TWILIO_FROM_NUMBER for every demo account; needs -public-url)")
	fs.StringVar(&o.publicURL, "public-url", "", "with -telephony twilio: the `URL` at which Twilio reaches this server (a tunnel), for its callbacks")
	fs.StringVar(&o.twilioAPIURL, "twilio-api-url", "", "with -telephony twilio: Twilio's API base `URL` (default https://api.twilio.com)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.evalEvery <= 0 {
		return o, fmt.Errorf("-eval-every must be positive")
	}
	if o.idleTimeout <= 0 {
		return o, fmt.Errorf("-conversation-idle-timeout must be positive")
	}
	var err error
	if o.schedule, err = webhook.ParseSchedule(*schedule); err != nil {
		return o, fmt.Errorf("-retry-schedule: %w", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch o.telephony {
	case "simulator":
	case "twilio":
		if o.publicURL == "" {
			return o, fmt.Errorf("-telephony twilio needs -public-url: Twilio calls this server back there")
		}
	default:
		return o, fmt.Errorf("-telephony must be simulator or twilio")
	}
	if _, ok := voiceops.LookupRegion(o.region); !ok {
		return o, fmt.Errorf("-region must be us, uk or eu")
	}
	return o, nil
}

// run starts the server and blocks until ctx ends. ready, when not nil,
// receives the credentials once the server accepts connections (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- Credentials) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, flushLog := devLogger(stderr)
	defer flushLog()
	// The service's own metrics, served at /metrics (observe.go).
	registry := prom.New()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b, err := openBackend(ctx, getenv, o, log, registry)
	if err != nil {
		return err
	}
	defer b.close()
	region := voiceops.Region(o.region)
	// The keys of the last run's credentials file are kept, so a restart
	// does not break the variables a shell took from it.
	var prev *Credentials
	if o.credentials != "" && !o.fresh {
		if prev, err = previousCredentials(o.credentials, region); err != nil {
			return err
		}
	}
	internalKey := keys.New(keys.KindInternal, region)
	if prev != nil {
		internalKey = prev.InternalKey
	}
	recorder := &buckets.Recorder{Store: b.metrics}
	policy := voiceops.URLPolicy{AllowLoopback: o.allowLoopback}
	// The functions' graphs (shared/conversations/convgraph, evalgraph, alertgraph) on
	// this server's stores.
	model, modelAt, err := bedrockModel(ctx, getenv)
	if err != nil {
		return err
	}
	if model != nil {
		log.Info("Bedrock agents answered at " + modelAt)
	}
	engine := convgraph.New(convgraph.Deps{Conversations: b.stores.Conversations, Configs: b.configs, DNI: b.dni, Metrics: b.metrics,
		AllowLoopback: o.allowLoopback, ChatIdleTimeout: o.idleTimeout, Telemetry: registry, Model: model, Now: time.Now, Log: log})
	ev := evalgraph.New(evalgraph.Deps{Stores: b.stores, Metrics: b.metrics, Rollups: b.rollups, Fanout: b.dispatcher.Fanout,
		Telemetry: registry, Now: time.Now, Log: log})
	// Stored metric data drives the evaluation, as the metrics table's
	// stream does deployed: the memory store notifies the trigger in
	// process; with AWS_ENDPOINT_URL the table's stream is read.
	trigger := evaluator.NewTrigger(ev)
	if err := b.watchMetrics(ctx, trigger.Notify); err != nil {
		return err
	}
	go trigger.Run(ctx)
	// A created or changed rule's scope, and an ended silence's, is
	// touched by the store's write (voiceops.RuleStore, wake-ups), and
	// evaluated through the trigger like stored data, as deployed.
	alerts := alertgraph.New(alertgraph.Deps{Rules: b.stores.Rules, Endpoints: b.stores.Endpoints, Marks: b.stores.Evaluations,
		Fanout: b.dispatcher.Fanout, Now: time.Now, Log: log})
	svc := alerts.Service
	// Outbound calls: the dialer, with the simulated provider (whose
	// answered calls talk through the same engine as the voice intake), or
	// Twilio, whose callbacks this server then serves.
	// A step slower than Twilio waits for runs on past its callback
	// (Detach): the callback answers a filler and Twilio fetches the result.
	callSvc := calls.New(b.calls, time.Now, calls.WithDial(b.dial), calls.WithEngine(engine), calls.WithSleep(dialer.SleepContext),
		calls.WithTelemetry(registry), calls.WithDetach(func(work func()) { go work() }))
	var provider telephony.Provider
	var callbacks []httpapi.Route
	switch o.telephony {
	case "twilio":
		creds, err := devTwilio(getenv)
		if err != nil {
			return err
		}
		provider = &twilio.Provider{Creds: creds, APIBaseURL: o.twilioAPIURL, CallbackBaseURL: o.publicURL}
		callbacks = (&twilioapi.Callbacks{Calls: callSvc, Creds: creds, PublicBaseURL: o.publicURL}).Routes()
	default:
		sim := &simulator.Simulator{Calls: callSvc, Sleep: dialer.SleepContext, Log: log}
		defer sim.Wait()
		provider = sim
	}
	stopDialer := b.startDialer(ctx, &dialer.Dialer{Calls: callSvc, Pacer: b.pacer, Queue: b.dial, Provider: provider,
		Now: time.Now, Sleep: dialer.SleepContext, Log: log, Telemetry: registry})
	defer stopDialer()
	guards := httpapi.NewGuards(b.requests, time.Now)
	if o.noRateLimit {
		guards.Limiter = nil
	}
	// Every group of both hosts, as the functions serve them (functions/*/main.go).
	api := httpapi.New(httpapi.Config{
		Keys: auth.New(b.stores.Accounts, region, time.Now), Projects: b.stores.Accounts,
		InternalKey: httpapi.FixedDigest(keys.Digest(internalKey)), Now: time.Now, Log: log,
		Deadline: httpapi.AgentDeadline, // one server for every route, conversation turns included
		// The same rate limits and Idempotency-Key as the deployed stack.
		Guards:  guards,
		Metrics: registry,
		CountError: func(ctx context.Context, accountID, projectID string, at time.Time) error {
			return recorder.Record(ctx, metrics.Count(metrics.APIErrors, accountID, projectID, at))
		},
	},
		(&studioapi.Alerts{Rules: alerts.Rules, Service: svc,
			History: b.stores.History, Endpoints: b.stores.Endpoints, Projects: b.stores.Accounts,
			Series: &series.Reader{Minutes: b.metrics, Hours: b.rollups, Now: time.Now}, Silences: b.stores.Silences, Now: time.Now}).Routes(),
		console.Routes(),
		(&studioapi.Webhooks{Endpoints: b.stores.Endpoints, Deliveries: b.stores.Deliveries, Service: svc, Outbox: b.dispatcher, URLPolicy: policy,
			Events: b.stores.Events, ConsoleURL: "http://" + o.addr + "/console/"}).Routes(),
		(&studioapi.Intake{Metrics: recorder, Now: time.Now}).Routes(),
		(&chatapi.Chat{Engine: engine}).Routes(),
		(&voiceapi.Voice{Engine: engine}).Routes(),
		(&eventsapi.Events{Engine: engine}).Routes(),
		(&voiceapi.DNI{Pools: b.dni, Now: time.Now}).Routes(),
		(&outboundapi.Outbound{Calls: callSvc, ValidNumber: phone.Valid, ValidCountry: phone.ValidCountry,
			Destinations: &destination.Checker{Policies: b.destinations, Region: region, Classify: phone.Classify}}).Routes(),
		(&conversationsapi.Conversations{Store: b.stores.Conversations, Now: time.Now}).Routes(),
		(&conversationsapi.Concurrency{Store: b.stores.Conversations, Now: time.Now}).Routes(),
		(&conversationsapi.Handoff{Store: b.stores.Conversations}).Routes(),
		callbacks,
	)
	go evaluateEvery(ctx, ev, o.evalEvery, log)
	go sweepEvery(ctx, engine, idleSweepPeriod, log)

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String()
	// Both hosts are this one address (the credentials' agent_studio_url
	// and base_url).
	idx := newDevIndex(url, url, o.credentials)
	srv := &http.Server{Handler: withHosts(newHostNames(o.addr, o.publicURL), withOperator(b, keys.Digest(internalKey), withIndex(idx, withMetrics(registry, withOpenAPI(api))))),
		ReadHeaderTimeout: 10 * time.Second}
	if o.apiOnly {
		srv.Handler = api
	}
	errc := make(chan error, 1)

	// Requests are served only once the credentials are written, so that
	// a script that waits for the first answer (scripts/waitfor) then
	// reads this run's credentials; connections made meanwhile wait in the
	// listener's backlog.
	creds, err := seed(ctx, demoseed.Stores{Provisioner: provision.Provisioner{Accounts: b.stores.Accounts, Region: region, Now: time.Now},
		Configs: b.configs, DNI: b.dni}, url, internalKey, prev)
	if err != nil {
		_ = ln.Close()
		return fmt.Errorf("seeding demo accounts: %w", err)
	}
	if o.demoData {
		if err := seedDemo(ctx, api, creds, svc, recorder, time.Now()); err != nil {
			_ = ln.Close()
			return fmt.Errorf("seeding demo data: %w", err)
		}
	}
	if err := writeCredentials(creds, o.credentials, stdout); err != nil {
		_ = ln.Close()
		return err
	}
	go func() { errc <- srv.Serve(ln) }()
	log.Info("serving", startupAttrs(idx, b.name, o)...)
	if ready != nil {
		ready <- creds
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Longer than net/http's 5 s grace for a connection that never sent a
	// request (a client's spare dial, common under load): Shutdown waits
	// that long for such connections before closing them.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log.Info("shutting down")
	return srv.Shutdown(shutdownCtx)
}

// startupAttrs are the start-up line's: where to go first (the console,
// the reference, the keys' file), then the settings, durations written as
// durations (a JSON log would print a time.Duration in nanoseconds).
func startupAttrs(idx devIndex, stores string, o options) []any {
	creds := idx.Credentials
	if creds == "" {
		creds = "(standard output)"
	}
	attrs := []any{"url", idx.Hosts[0].URL, "console", idx.Links[0].Href}
	if o.apiOnly { // nor the reference, nor the OpenAPI document
		attrs = append(attrs, "api_only", true)
	} else {
		attrs = append(attrs, "docs", idx.Links[1].Href)
	}
	attrs = append(attrs, "credentials", creds)
	if !o.apiOnly {
		attrs = append(attrs, "openapi", idx.Links[2].Href)
	}
	return append(attrs, "stores", stores,
		"eval_every", shortDuration(o.evalEvery), "retry_schedule", shortSchedule(o.schedule), "allow_loopback_webhooks", o.allowLoopback,
		"conversation_idle_timeout", shortDuration(o.idleTimeout))
}

// shortDuration writes d as a duration without its zero tail: 1m, 30m,
// 1h30m, 4s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// shortSchedule is a retry schedule as -retry-schedule reads it, each delay
// a shortDuration: 0s,1m,5m,15m,1h,4h.
func shortSchedule(s webhook.Schedule) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = shortDuration(d)
	}
	return strings.Join(parts, ",")
}

// backend is what the dev server runs on: stores, metrics, the delivery
// queue and its dispatcher.
type backend struct {
	name    string
	stores  voiceops.Stores
	configs voiceops.AgentConfigStore
	// destinations are the accounts' outbound destination policies.
	destinations destination.Store
	dni          voiceops.DNIStore
	calls        voiceops.CallStore
	requests     httpapi.GuardStore
	pacer        voiceops.Pacer
	dial         voiceops.DialQueue
	// startDialer hands the dial queue's jobs to d until the returned stop.
	startDialer func(ctx context.Context, d *dialer.Dialer) (stop func())
	metrics     buckets.Store
	rollups     series.HourStore // the metric series' hourly roll-ups
	dispatcher  *delivery.Dispatcher
	// watchMetrics calls notify with the scopes of the metric data stored
	// from now on, until ctx ends.
	watchMetrics func(ctx context.Context, notify func(...metrics.Scope)) error
	close        func()
}

// openBackend uses DynamoDB and SQS when AWS_ENDPOINT_URL is set (creating
// missing tables and queues, and consuming the queue in process like the
// Lambda event source does), else the in-memory stores and the in-process
// queue, which behaves like SQS for this purpose: delays, redelivery after a
// failed attempt, at least once.
func openBackend(ctx context.Context, getenv func(string) string, o options, log *slog.Logger, rec telemetry.Recorder) (backend, error) {
	sender := webhook.NewSender(webhook.Options{AllowLoopback: o.allowLoopback})
	var d *delivery.Dispatcher
	dispatcherConfig := func(s voiceops.Stores, q queue.Queue) delivery.Config {
		// The console as -addr names it: Slack and PagerDuty messages link
		// to their rule's page there.
		return delivery.Config{Stores: s, Queue: q, Sender: sender, Schedule: o.schedule, Logger: log, Telemetry: rec,
			ConsoleURL: "http://" + o.addr + "/console/"}
	}
	endpoint := getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		mem := memory.New()
		stores := mem.Stores()
		ms := memory.NewMetrics()
		mem.WakeWith(ms.Touch) // a wake-up notifies watchMetrics, storing no data
		q := queue.NewMemory(func(ctx context.Context, m queue.Message) error { return d.Handle(ctx, m) }, queue.MemoryOptions{
			OnDeadLetter: func(m queue.Message, err error) {
				log.Error("delivery message dead-lettered", "delivery_id", m.DeliveryID, "error", err)
			},
		})
		d = delivery.NewDispatcher(dispatcherConfig(stores, q))
		watch := func(_ context.Context, notify func(...metrics.Scope)) error {
			ms.OnAdd(func(s []metrics.Scope) { notify(s...) })
			return nil
		}
		var dial *dialer.Dialer
		dq := &dialer.MemoryQueue{Log: log,
			Handler: func(ctx context.Context, j voiceops.DialJob) error { return dial.Handle(ctx, j) },
			GiveUp:  func(ctx context.Context, j voiceops.DialJob) error { return dial.GiveUp(ctx, j) }}
		return backend{name: "memory", stores: stores, configs: mem.AgentConfigs(), destinations: mem.Destinations(), dni: mem.DNI(), calls: memory.NewCalls(), requests: memory.NewRequests(),
			metrics: ms, rollups: memory.NewRollups(), dispatcher: d, watchMetrics: watch, close: q.Close,
			pacer: memory.NewPacer(), dial: dq,
			startDialer: func(_ context.Context, d *dialer.Dialer) func() { dial = d; return dq.Close },
		}, nil
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return backend{}, err
	}
	// The emulators (moto) send a wrong x-amz-crc32 with some responses
	// under load, and the SDK then drops the connection mid-read: a metric
	// write, not retried after a lost answer, would fail (awstest does the same).
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = true })
	names := dynamo.TableNamesFor(o.tablePrefix)
	if err := dynamo.CreateTables(ctx, db, names); err != nil {
		return backend{}, fmt.Errorf("creating tables at %s: %w", endpoint, err)
	}
	sqsClient := sqs.NewFromConfig(cfg)
	url, _, err := queue.CreateQueues(ctx, sqsClient, queue.QueueSpec{Name: o.tablePrefix + "-deliveries", Visibility: 30 * time.Second, MaxReceives: 5})
	if err != nil {
		return backend{}, fmt.Errorf("creating queues at %s: %w", endpoint, err)
	}
	outboundURL, _, err := queue.CreateQueues(ctx, sqsClient, queue.QueueSpec{Name: o.tablePrefix + "-outbound", Visibility: dialerVisibility, MaxReceives: 5})
	if err != nil {
		return backend{}, fmt.Errorf("creating queues at %s: %w", endpoint, err)
	}
	store := dynamo.NewConfig(db, names.Config, names.Deliveries)
	stores := dynamo.NewStores(db, names)
	q := queue.NewSQS(sqsClient, url)
	d = delivery.NewDispatcher(dispatcherConfig(stores, q))
	consumeCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = q.Consume(consumeCtx, d.HandleSQS, queue.ConsumeOptions{Wait: time.Second, OnError: func(err error) {
			log.Error("consuming the delivery queue", "error", err)
		}})
	}()
	streamDone := make(chan struct{})
	close(streamDone) // until watchMetrics starts the reader
	watch := func(ctx context.Context, notify func(...metrics.Scope)) error {
		reader := tablestream.New(dynamodbstreams.NewFromConfig(cfg), names.Metrics, tablestream.Options{OnError: func(err error) {
			log.Error("reading the metrics table's stream", "error", err)
		}})
		read, err := reader.Start(consumeCtx, func(_ context.Context, records []streamtypes.Record) error {
			notify(metricScopes(records)...)
			return nil
		})
		if err != nil {
			return err
		}
		streamDone = make(chan struct{})
		go func() { defer close(streamDone); read() }()
		return nil
	}
	return backend{
		name: "dynamodb and sqs at " + endpoint, stores: stores, configs: store.AgentConfigs(), destinations: dynamo.Destinations(store), dni: store.DNI(), metrics: metricstore.New(db, names.Metrics), rollups: metricstore.NewRollups(db, names.Metrics), dispatcher: d,
		calls: dynamo.NewCalls(db, names.Calls), pacer: dynamo.NewPacer(db, names.Calls),
		requests: dynamo.NewRequests(db, names.Requests, names.Config), watchMetrics: watch,
		dial: &dialer.SQSQueue{Client: sqsClient, URL: outboundURL},
		startDialer: func(ctx context.Context, d *dialer.Dialer) func() {
			ctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_ = queue.NewSQS(sqsClient, outboundURL).Consume(ctx, d.HandleSQS, queue.ConsumeOptions{Wait: time.Second, OnError: func(err error) {
					log.Error("consuming the outbound queue", "error", err)
				}})
			}()
			return func() { stop(); <-done }
		},
		close: func() { stop(); <-done; <-streamDone },
	}, nil
}

// metricScopes returns the scopes of the items the stream records say were
// inserted or changed in the metrics table (a metric write adds into an
// item of its minute; TTL deletions change nothing to evaluate).
func metricScopes(records []streamtypes.Record) []metrics.Scope {
	var out []metrics.Scope
	for _, r := range records {
		if (r.EventName != streamtypes.OperationTypeInsert && r.EventName != streamtypes.OperationTypeModify) || r.Dynamodb == nil {
			continue
		}
		pk, _ := r.Dynamodb.Keys[tables.Metrics.PartitionKey].(*streamtypes.AttributeValueMemberS)
		if pk == nil {
			continue
		}
		if a, p, ok := dynamo.MetricScope(pk.Value); ok {
			out = append(out, metrics.Scope{AccountID: a, ProjectID: p})
		}
	}
	return out
}

// idleSweepPeriod is how often the dev server ends idle conversations: a
// second, so that an idle end can be watched within seconds (the deployed
// stack sweeps on its one-minute schedule; respond and close end an
// overdue conversation themselves in both).
const idleSweepPeriod = time.Second

// sweepEvery ends idle conversations every period until ctx ends.
func sweepEvery(ctx context.Context, e *conversation.Engine, period time.Duration, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := e.SweepIdle(ctx); err != nil && ctx.Err() == nil {
				log.Error("idle sweep", "error", err)
			}
		}
	}
}

// devTwilio is the one Twilio account of every demo account, from the
// environment (the deployed stacks keep one per account in Secrets Manager).
type devTwilioAccount twilio.Account

func devTwilio(getenv func(string) string) (devTwilioAccount, error) {
	a := devTwilioAccount{AccountSID: getenv("TWILIO_ACCOUNT_SID"), AuthToken: getenv("TWILIO_AUTH_TOKEN"), FromNumber: getenv("TWILIO_FROM_NUMBER")}
	if a.AccountSID == "" || a.AuthToken == "" || !voiceops.ValidE164(a.FromNumber) {
		return a, fmt.Errorf("-telephony twilio needs TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM_NUMBER (E.164) in the environment")
	}
	return a, nil
}

func (a devTwilioAccount) Twilio(context.Context, string) (twilio.Account, error) {
	return twilio.Account(a), nil
}

// dialerVisibility is the outbound queue's visibility timeout: longer than
// a dialer's longest handling (its in-process wait for a slot, a provider
// call and its retries).
const dialerVisibility = 60 * time.Second

// evaluateEvery runs the evaluator every period until ctx ends, like the
// deployed stack's one-minute schedule.
func evaluateEvery(ctx context.Context, ev *evaluator.Evaluator, period time.Duration, log *slog.Logger) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			st, err := ev.Run(ctx)
			ev.Observe(evaluator.SourceSchedule, st, 0, false)
			if err != nil && ctx.Err() == nil {
				log.Error("evaluation run", "error", err)
			}
			if st.Events > 0 || st.Repaired > 0 || st.Errors > 0 {
				log.Info("evaluation run", "rules", st.Rules, "events", st.Events, "repaired", st.Repaired, "errors", st.Errors)
			}
		}
	}
}
