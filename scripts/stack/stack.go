package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/scripts/stack/alarms"
	"github.com/voiceops/opsapi/scripts/stack/apigw"
	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/scripts/stack/cfn"
	"github.com/voiceops/opsapi/scripts/stack/deploy"
	"github.com/voiceops/opsapi/scripts/stack/esm"
	"github.com/voiceops/opsapi/scripts/stack/iam"
	"github.com/voiceops/opsapi/scripts/stack/lambdas"
	"github.com/voiceops/opsapi/scripts/stack/sns"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
	"github.com/voiceops/opsapi/shared/ops/demoseed"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// twilioAPIEnv is functions/dialer's TwilioAPIEnv: Twilio's API base URL,
// replaced by a stand-in.
const twilioAPIEnv = "TWILIO_API_BASE_URL"

// account is the account ID moto uses by default.
const account = "123456789012"

// Stack is a running stack.
type Stack struct {
	Credentials Credentials
	ProxyURL    string
	// BedrockURL is the proxy's Bedrock Runtime endpoint, the functions'
	// AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
	BedrockURL string
	MotoURL    string
	LogDir     string
	Proxy      *awsproxy.Proxy
	Runner     *lambdas.Runner
	Topology   topology
	AWS        aws.Config // the emulator, with the runner's own credentials
	Values     *cfn.Values
	// Alarms are the template's alarms, evaluated on the metrics the
	// runner collects; AlarmTopics are the SNS topics their actions name.
	Alarms      *alarms.Evaluator
	AlarmTopics []string
	// UnreadAlarms are the alarms the runner cannot evaluate, and why.
	UnreadAlarms []error
	// Unevaluable are alarms the runner can read but does not evaluate
	// with this run's flags (splitUnevaluable); they never change state.
	Unevaluable []Unevaluable
	// Bedrock is the Bedrock Runtime stand-in the functions' Converse
	// calls reach (through the proxy's IAM check); scenarios script it.
	Bedrock *bedrockstandin.Server
	monitor *monitor
	// invoke runs a function as the APIs and mappings do (throttling,
	// observers, Lambda's metrics).
	invoke  apigw.Invoke
	runCtx  context.Context
	bareURL string // ServeBare's, once started
	bareMu  sync.Mutex

	throttleMu sync.Mutex
	throttled  map[string]bool // by function: invocations refused (fault injection)
	observe    func(function string, payload []byte)
	invoked    func(function string, d time.Duration)
	// schedulesPaused: the EventBridge schedules skip their firings.
	schedulesPaused bool

	root, cache string // the repository and the build cache (ServeBare builds there)

	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func()
}

// Close stops everything Start started.
func (s *Stack) Close() {
	s.cancel()
	s.wg.Wait()
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// Start stands the stack up.
func Start(ctx context.Context, o options, getenv func(string) string, log *slog.Logger) (_ *Stack, err error) {
	region, ok := voiceops.LookupRegion(o.region)
	if !ok {
		return nil, fmt.Errorf("-region must be us, uk or eu")
	}
	awsRegion := region.AWSRegion
	stackName := "VoiceOps-" + o.region
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, err
	}
	// The keys of the last run's credentials file are kept (read first: a
	// file that is not one fails the start before anything is built).
	var prev *Credentials
	if o.credentials != "" && !o.fresh {
		if prev, err = demoseed.Previous(o.credentials, region.Region); err != nil {
			return nil, err
		}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Stack{cancel: cancel, runCtx: runCtx, root: root, cache: o.cache}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if err := os.MkdirAll(o.cache, 0o755); err != nil {
		return nil, err
	}
	s.LogDir, err = os.MkdirTemp("", "voiceops-stack-logs-")
	if err != nil {
		return nil, err
	}

	// The RIE builds while the app synthesizes and the template's
	// functions build.
	rieDone := make(chan error, 1)
	var rie string
	go func() {
		var err error
		rie, err = lambdas.BuildRIE(ctx, o.cache)
		rieDone <- err
	}()
	dir := o.assembly
	if dir == "" {
		if dir, err = synth(ctx, root, o.region, o.context); err != nil {
			<-rieDone
			return nil, err
		}
		s.closers = append(s.closers, func() { os.RemoveAll(dir) })
	}
	tmpl, err := cfn.Load(dir, stackName)
	if err != nil {
		<-rieDone
		return nil, err
	}
	var names []string
	for _, id := range tmpl.OfType("AWS::Lambda::Function") {
		if n, _ := tmpl.Resources[id].Metadata[functionMetadata].(string); n != "" {
			names = append(names, n)
		}
	}
	// Each run builds into a directory of its own (the go build cache keeps
	// that cheap): two runs on one machine, from two trees, never start
	// each other's builds.
	fnDir, err := os.MkdirTemp("", "voiceops-stack-functions-")
	if err != nil {
		<-rieDone
		return nil, err
	}
	s.closers = append(s.closers, func() { os.RemoveAll(fnDir) })
	bootstraps := map[string]string{}
	buildErr := buildAll(ctx, root, fnDir, names, func(name, path string) { bootstraps[name] = path })
	if err := errors.Join(buildErr, <-rieDone); err != nil {
		return nil, err
	}

	// moto, unless AWS_ENDPOINT_URL names an emulator already running.
	s.MotoURL = getenv("AWS_ENDPOINT_URL")
	if s.MotoURL == "" {
		url, stop, err := startMoto(ctx, s.LogDir)
		if err != nil {
			return nil, err
		}
		s.closers = append(s.closers, stop)
		s.MotoURL = url
	}
	// A call that moto never answers fails after a minute (SQS's longest
	// poll is 20 s) instead of holding its caller, a scenario or a poller,
	// until the suite's timeout.
	s.AWS = aws.Config{Region: awsRegion, BaseEndpoint: aws.String(s.MotoURL),
		Credentials: credentials.NewStaticCredentialsProvider("stack-runner", "stack-runner", ""),
		HTTPClient:  awshttp.NewBuildableClient().WithTimeout(time.Minute)}
	clients := deploy.Clients{DynamoDB: dynamodb.NewFromConfig(s.AWS), SQS: sqs.NewFromConfig(s.AWS), SecretsManager: secretsmanager.NewFromConfig(s.AWS),
		SNS: sns.Client{Endpoint: s.MotoURL, Region: awsRegion}}
	v := cfn.NewValues(account, awsRegion, stackName)
	s.Values = v
	if err := deploy.Stack(ctx, clients, tmpl, stackName, v); err != nil {
		return nil, fmt.Errorf("creating the template's resources on %s: %w", s.MotoURL, err)
	}

	// The hosts listen before the functions' environment is resolved: it
	// names the base host's endpoint (PUBLIC_BASE_URL).
	apis := map[string]*api{}
	listeners := map[string]net.Listener{}
	for _, id := range tmpl.OfType("AWS::ApiGatewayV2::Api") {
		name, _ := tmpl.Resources[id].Properties["Name"].(string)
		addr := "127.0.0.1:0"
		switch {
		case strings.HasSuffix(name, "-studio"):
			addr = o.studioAddr
		case strings.HasSuffix(name, "-base"):
			addr = o.baseAddr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("API %s: %w", name, err)
		}
		listeners[id] = ln
		apiID := randomID(10)
		cors, err := apigw.ParseCORS(tmpl.Resources[id].Properties["CorsConfiguration"])
		if err != nil {
			return nil, fmt.Errorf("API %s: %w", name, err)
		}
		apis[id] = &api{LogicalID: id, Name: name, ID: apiID, CORS: cors}
		v.Set(id, apiID, map[string]string{"ApiEndpoint": "http://" + ln.Addr().String(), "ApiId": apiID})
	}
	for _, id := range tmpl.OfType("AWS::ApiGatewayV2::Stage") {
		p := tmpl.Resources[id].Properties
		ref, _ := p["ApiId"].(map[string]any)
		apiID, _ := ref["Ref"].(string)
		vars, _ := p["StageVariables"].(map[string]any)
		if a := apis[apiID]; a != nil && len(vars) > 0 {
			a.StageVariables = map[string]string{}
			for k, val := range vars {
				s, ok := val.(string)
				if !ok {
					return nil, fmt.Errorf("stage %s: stage variable %s is not a string", id, k)
				}
				a.StageVariables[k] = s
			}
		}
	}
	for id, r := range tmpl.Resources {
		if _, done := v.Refs[id]; !done && r.Type != "AWS::Lambda::Function" && r.Type != "AWS::IAM::Role" {
			v.Set(id, id, map[string]string{}) // integrations, log groups, alarms: only named
		}
	}
	arns := awsproxy.ARNs{Partition: "aws", Region: awsRegion, Account: account}
	fns, err := readFunctions(tmpl, v, stackName, arns)
	if err != nil {
		return nil, err
	}
	if err := readRoutes(tmpl, fns, apis); err != nil {
		return nil, err
	}
	queueURLs := map[string]string{}
	secretARNs := map[string]string{}
	for id, r := range tmpl.Resources {
		switch r.Type {
		case "AWS::SQS::Queue":
			queueURLs[v.Attrs[id]["Arn"]] = v.Refs[id]
		case "AWS::SecretsManager::Secret":
			secretARNs[v.Attrs[id]["Name"]] = v.Refs[id]
		}
	}
	top, err := readMappings(tmpl, v, fns, queueURLs, awsRegion)
	if err != nil {
		return nil, err
	}
	top.Functions, top.APIs = fns, apis
	s.Topology = top

	// The alarms, and the topics their actions name that the template
	// does not create (context alarmTopicArn names an existing one).
	as, unread, err := readAlarms(tmpl, v)
	if err != nil {
		return nil, err
	}
	for _, err := range unread {
		log.Error("alarm not evaluated", "err", err)
	}
	s.UnreadAlarms = unread
	s.AlarmTopics = actionTopics(as)
	as, s.Unevaluable = splitUnevaluable(as, top.Schedules, o.scheduleEvery, o.alarmTimeScale)
	for _, u := range s.Unevaluable {
		log.Warn("alarm not evaluated in this run", "alarm", u.Alarm.Name, "reason", u.Reason)
	}
	if err := deploy.Topics(ctx, clients.SNS, s.AlarmTopics); err != nil {
		return nil, fmt.Errorf("alarm topics: %w", err)
	}
	mon := newMonitor(as, o.alarmTimeScale, clients.SNS, account, awsRegion, log)
	s.monitor, s.Alarms = mon, mon.eval
	physical := map[string]string{} // function → its Lambda name
	for _, f := range fns {
		physical[f.Name] = f.FunctionName
	}

	// The AWS proxy the functions call.
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.ProxyURL = "http://" + proxyLn.Addr().String()
	// Bedrock Runtime has its own endpoint, the SDK's standard variable.
	bedrockLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.BedrockURL = "http://" + bedrockLn.Addr().String()
	twilioURL := o.twilioAPIURL
	if o.telephony == telephonyStandIn {
		if twilioURL, err = startStandIn(runCtx, log); err != nil {
			return nil, err
		}
	}
	s.Runner = &lambdas.Runner{RIE: rie, Region: awsRegion, AWSEndpoint: s.ProxyURL, BedrockEndpoint: s.BedrockURL, LogDir: s.LogDir, Log: log}
	s.closers = append(s.closers, s.Runner.Close)
	upstream, err := url.Parse(s.MotoURL)
	if err != nil {
		return nil, err
	}
	var bedrockURL *url.URL
	if s.Bedrock, bedrockURL, err = startBedrock(runCtx); err != nil {
		return nil, err
	}
	s.Proxy = &awsproxy.Proxy{Upstream: upstream, Bedrock: bedrockURL, Principals: map[string]awsproxy.Principal{}, ARNs: arns,
		SecretARN: func(name string) string { return secretARNs[name] }, Functions: map[string]string{}, Log: log,
		Throttled: func(_, table string, write bool) { mon.tableThrottled(table, write) }}
	for _, f := range fns {
		key := accessKeyID(f.Name)
		s.Proxy.Principals[key] = awsproxy.Principal{Function: f.Name, Role: v.Refs[f.RoleID], Policy: f.Policy}
		s.Proxy.Functions[f.FunctionName] = f.Name
		env := localEnv(o, f.Env, twilioURL)
		bs, ok := bootstraps[f.Name]
		if !ok {
			return nil, fmt.Errorf("the template's function %s has no functions/%s to build", f.LogicalID, f.Name)
		}
		s.Runner.Add(lambdas.Spec{Name: f.Name, FunctionName: f.FunctionName, Bootstrap: bs, Env: env,
			Timeout: f.Timeout, MemoryMB: f.MemoryMB, AccessKeyID: key, Concurrency: o.concurrency})
	}
	invoke := func(ctx context.Context, fn string, payload []byte) ([]byte, bool, error) {
		spec, _ := s.Runner.Spec(fn) // its Lambda name, a function ServeBare added included
		if s.isThrottled(fn) {
			mon.throttled(spec.FunctionName)
			return nil, false, fmt.Errorf("TooManyRequestsException: Rate Exceeded (function %s)", fn)
		}
		if f := s.observer(); f != nil {
			f(fn, payload)
		}
		res, err := s.Runner.Invoke(ctx, fn, payload)
		mon.invocation(spec.FunctionName, res.Duration, err != nil || res.FunctionError)
		if f := s.invokedObserver(); f != nil && err == nil {
			f(fn, res.Duration)
		}
		return res.Output, res.FunctionError, err
	}
	s.invoke = invoke
	async := func(ctx context.Context, fn string, payload []byte) {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if out, fnErr, err := invoke(ctx, fn, payload); err != nil || fnErr {
				log.Error("async invocation failed", "function", fn, "err", err, "output", string(out))
			}
		}()
	}
	s.Proxy.Invoke = func(ctx context.Context, fn string, payload []byte, isAsync bool) ([]byte, bool, error) {
		if isAsync {
			async(runCtx, fn, payload)
			return nil, false, nil
		}
		return invoke(ctx, fn, payload)
	}
	s.serve(proxyLn, s.Proxy)
	s.serve(bedrockLn, s.Proxy.BedrockRuntime())
	for id, a := range apis {
		router, err := apigw.NewRouter(a.Routes)
		if err != nil {
			return nil, fmt.Errorf("API %s: %w", a.Name, err)
		}
		s.serve(listeners[id], mon.measured(a.ID, &apigw.API{Name: a.Name, ID: a.ID, Account: account, StageVariables: a.StageVariables, Router: router, Invoke: invoke, CORS: a.CORS, Log: log}))
	}

	// Event sources. Lambda polls with the function's role: its policy
	// must allow the polling, as deployed.
	// A mapping the role cannot poll fails the deploy, as
	// CloudFormation's CreateEventSourceMapping does.
	if err := checkMappings(s.Proxy, top, queueURLs); err != nil {
		return nil, err
	}
	sqsClient := clients.SQS
	for _, m := range top.SQS {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); esm.RunSQS(runCtx, sqsClient, m, invoke, log) }()
	}
	for _, m := range top.Streams {
		fn := physical[m.Function]
		m.IteratorAge = func(d time.Duration) { mon.iteratorAge(fn, d) }
		api := esm.StreamsAPI{Endpoint: s.MotoURL, Region: awsRegion}
		s.wg.Add(1)
		go func() { defer s.wg.Done(); esm.RunStream(runCtx, api, sqsClient, m, invoke, log) }()
	}
	scheduled := scheduledFirings(s.schedulesArePaused, o.scheduleEvery != 0,
		func(ctx context.Context, fn string) int { return queuedFor(ctx, sqsClient, top.SQS, fn) }, async, log)
	for _, sc := range top.Schedules {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); esm.RunSchedule(runCtx, sc, o.scheduleEvery, scheduled, log) }()
	}

	queues := map[string]string{} // name → URL
	for _, id := range tmpl.OfType("AWS::SQS::Queue") {
		queues[v.Attrs[id]["QueueName"]] = v.Refs[id]
	}
	var logNames []string
	for _, f := range fns {
		logNames = append(logNames, f.Name)
	}
	s.wg.Add(3)
	go func() { defer s.wg.Done(); mon.run(runCtx) }()
	go func() { defer s.wg.Done(); mon.sampleQueues(runCtx, sqsClient, queues) }()
	go func() { defer s.wg.Done(); tailLogs(runCtx, s.LogDir, logNames, mon.emf) }()

	internalSecret := ""
	for _, f := range fns {
		if id := f.Env[lambdamain.InternalKeyEnv]; id != "" {
			internalSecret = id
		}
	}
	creds, err := seedAccounts(ctx, clients.DynamoDB, s.Topology.TableNames(), string(region.Region), internalSecret, clients.SecretsManager, prev)
	if err != nil {
		return nil, fmt.Errorf("seeding demo accounts: %w", err)
	}
	if o.telephony == telephonyStandIn {
		var ids []string
		for _, a := range creds.Accounts {
			ids = append(ids, a.AccountID)
		}
		for _, f := range fns {
			if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
				if err := setStandInAccounts(ctx, clients.SecretsManager, id, ids); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	for id, a := range apis {
		u := "http://" + listeners[id].Addr().String()
		switch {
		case strings.HasSuffix(a.Name, "-studio"):
			creds.AgentStudioURL = u
		case strings.HasSuffix(a.Name, "-base"):
			creds.BaseURL = u
		}
	}
	s.Credentials = creds
	return s, nil
}

// scheduledFirings is what a schedule's firing does: it invokes the
// target, unless the schedules are paused or, with time compressed
// (-schedule-every), the target's queues still hold messages. A firing
// every few seconds sends what a deployed one sends each minute (the
// evaluator's 16 shard messages); while an earlier firing's messages wait,
// the next is skipped, so that a slow moment (a loaded machine) cannot
// grow a backlog: moto's ReceiveMessage takes longer the deeper the queue,
// every other call waits behind it, and such a backlog was never worked
// off.
func scheduledFirings(paused func() bool, compressed bool, waiting func(ctx context.Context, fn string) int, invoke esm.AsyncInvoke, log *slog.Logger) esm.AsyncInvoke {
	return func(ctx context.Context, fn string, payload []byte) {
		if paused() {
			return
		}
		if compressed && waiting(ctx, fn) > 0 {
			log.Debug("schedule firing skipped: its target's queue is not empty", "function", fn)
			return
		}
		invoke(ctx, fn, payload)
	}
}

// queuedFor counts the messages waiting (visible) in the queues that fn
// consumes; an error counts as none, so that a failed count never stops
// the schedules.
func queuedFor(ctx context.Context, q *sqs.Client, mappings []esm.SQSMapping, fn string) int {
	n := 0
	for _, m := range mappings {
		if m.Function != fn {
			continue
		}
		out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &m.QueueURL,
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			continue
		}
		v, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
		n += v
	}
	return n
}

// PauseSchedules makes the EventBridge schedules skip their firings, or
// fire again: with -schedule-every a scheduled evaluation every few
// seconds would notify before the stream does, which deployed (once a
// minute) it almost never does; a measure of the stream's path pauses it.
func (s *Stack) PauseSchedules(on bool) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	s.schedulesPaused = on
}

func (s *Stack) schedulesArePaused() bool {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	return s.schedulesPaused
}

// SetThrottled makes Lambda refuse the function's invocations
// (TooManyRequestsException, counted in its Throttles) or run them again:
// a fault to inject.
func (s *Stack) SetThrottled(function string, on bool) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	if s.throttled == nil {
		s.throttled = map[string]bool{}
	}
	s.throttled[function] = on
}

// ObserveInvocations hands every invocation's payload to f before the
// function runs (nil stops): a test reads what a mapping sent, e.g. the
// receipt handles of a batch it is about to crash.
func (s *Stack) ObserveInvocations(f func(function string, payload []byte)) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	s.observe = f
}

func (s *Stack) observer() func(string, []byte) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	return s.observe
}

// ObserveInvoked hands f each invocation's duration once the function
// answered (nil stops): the RIE's request to its answer, the function's
// time with the emulator's own.
func (s *Stack) ObserveInvoked(f func(function string, d time.Duration)) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	s.invoked = f
}

func (s *Stack) invokedObserver() func(string, time.Duration) {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	return s.invoked
}

func (s *Stack) isThrottled(function string) bool {
	s.throttleMu.Lock()
	defer s.throttleMu.Unlock()
	return s.throttled[function]
}

// checkMappings checks that each mapping's function role allows the
// polling Lambda does with it.
func checkMappings(p *awsproxy.Proxy, top topology, queueURLs map[string]string) error {
	var errs []error
	for _, m := range top.SQS {
		if err := p.Check(m.Function, []iam.Request{
			{Action: "sqs:ReceiveMessage", Resource: m.QueueARN}, {Action: "sqs:DeleteMessage", Resource: m.QueueARN},
			{Action: "sqs:GetQueueAttributes", Resource: m.QueueARN}}); err != nil {
			errs = append(errs, fmt.Errorf("event source mapping of %s to %s: %w", m.Function, m.QueueARN, err))
		}
	}
	for _, m := range top.Streams {
		reqs := []iam.Request{{Action: "dynamodb:DescribeStream", Resource: m.StreamARN}, {Action: "dynamodb:GetRecords", Resource: m.StreamARN},
			{Action: "dynamodb:GetShardIterator", Resource: m.StreamARN}, {Action: "dynamodb:ListStreams", Resource: "*"}}
		if m.OnFailureQueue != "" {
			for arn, u := range queueURLs {
				if u == m.OnFailureQueue {
					reqs = append(reqs, iam.Request{Action: "sqs:SendMessage", Resource: arn})
				}
			}
		}
		if err := p.Check(m.Function, reqs); err != nil {
			errs = append(errs, fmt.Errorf("event source mapping of %s to %s: %w", m.Function, m.StreamARN, err))
		}
	}
	return errors.Join(errs...)
}

// serve serves h on ln until the stack closes.
func (s *Stack) serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	s.closers = append(s.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
}

// Report prints the refused calls and, with unused, the grants no call
// used.
func (s *Stack) Report(w io.Writer, unused bool) {
	d := s.Proxy.Denials()
	fmt.Fprintf(w, "AccessDenied: %d calls\n", len(d))
	for _, x := range d {
		fmt.Fprintf(w, "  %s\n", x)
	}
	if !unused {
		return
	}
	u := s.Proxy.Unused()
	names := make([]string, 0, len(u))
	for n := range u {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "grants no call used (function: action on resources):")
	for _, n := range names {
		var actions []string
		byAction := map[string][]string{}
		for _, g := range u[n] {
			if byAction[g.Action] == nil {
				actions = append(actions, g.Action)
			}
			byAction[g.Action] = append(byAction[g.Action], shortARN(g.Resource))
		}
		for _, a := range actions {
			fmt.Fprintf(w, "  %s: %s on %s\n", n, a, strings.Join(byAction[a], ", "))
		}
	}
}

// shortARN drops an ARN's partition, region and account, which are the
// same for every resource of the stack.
func shortARN(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return arn
	}
	return parts[2] + ":" + parts[5]
}

// accessKeyID is a function's access key ID: the proxy knows the caller
// by it.
func accessKeyID(function string) string { return "STACK" + strings.ToUpper(function) }

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// synth runs the CDK app for one region into a temporary cloud assembly,
// without bundling the functions (the runner builds them for this
// machine).
func synth(ctx context.Context, root, region string, extra map[string]string) (string, error) {
	dir, err := os.MkdirTemp("", "voiceops-stack-cdk-")
	if err != nil {
		return "", err
	}
	c := map[string]any{}
	for k, v := range extra {
		c[k] = v
	}
	c["region"], c["aws:cdk:bundling-stacks"] = region, []string{}
	ctxJSON, _ := json.Marshal(c)
	cmd := exec.CommandContext(ctx, "go", "run", "./infra")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CDK_OUTDIR="+dir, "CDK_CONTEXT_JSON="+string(ctxJSON), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("synthesizing the app (go run ./infra): %v\n%s", err, out)
	}
	return dir, nil
}

// buildAll builds the functions, two at a time (the go command uses every
// core for each).
func buildAll(ctx context.Context, root, dir string, names []string, done func(name, path string)) error {
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			path, err := lambdas.BuildFunction(ctx, root, n, dir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			done(n, path)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startMoto starts moto_server on a free port.
func startMoto(ctx context.Context, logDir string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, err := os.Create(filepath.Join(logDir, "moto.log"))
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command("moto_server", "-H", "127.0.0.1", "-p", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting moto_server (set AWS_ENDPOINT_URL to use a running emulator): %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done); logf.Close() }()
	stop := func() { _ = cmd.Process.Kill(); <-done }
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i := 0; ; i++ {
		resp, err := http.Get(u + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return u, stop, nil
		}
		select {
		case <-done:
			return "", nil, fmt.Errorf("moto_server exited (see %s)", logf.Name())
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if i > 300 {
			stop()
			return "", nil, fmt.Errorf("moto_server did not answer on %s", u)
		}
	}
}

// localEnv is a function's environment under the runner: the template's,
// plus the local-only variables the runner's flags set (never in the
// template).
func localEnv(o options, template map[string]string, twilioURL string) map[string]string {
	env := maps.Clone(template)
	if env == nil {
		env = map[string]string{}
	}
	if o.allowLoopback {
		env[lambdamain.LocalLoopbackEnv] = "true"
	}
	if o.retrySchedule != "" {
		env[lambdamain.LocalRetryScheduleEnv] = o.retrySchedule
	}
	if o.idleTimeout > 0 {
		env[lambdamain.LocalChatIdleTimeoutEnv] = o.idleTimeout.String()
	}
	if twilioURL != "" && env[lambdamain.TwilioSecretEnv] != "" {
		env[twilioAPIEnv] = twilioURL
	}
	return env
}
