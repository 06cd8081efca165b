package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/catalog"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/tables"
)

// Host is one of the two public hosts a regional stack serves (the
// catalog's: shared/platform/catalog).
type Host = catalog.Host

const (
	// StudioHost serves the studio host ({agent_studio_url}): alerts, webhooks and the
	// internal metric intake.
	StudioHost = catalog.Studio
	// BaseHost serves the base host ({base_url}): conversations, chat, calls, events.
	BaseHost = catalog.Base
)

// Hosts lists every host; each regional stack has one HTTP API per host.
var Hosts = catalog.Hosts

// Route is one API Gateway HTTP API route. Method is an HTTP method or "ANY";
// Path may end in a greedy "{proxy+}" segment.
type Route struct {
	Host   Host
	Method string
	Path   string
}

// QueueConsumer makes a function drain the delivery queue (or, with
// Outbound, the outbound queue of dial jobs) through an SQS event source
// mapping that reports batch item failures.
type QueueConsumer struct {
	BatchSize      int // messages per invocation (1 to 10)
	MaxConcurrency int // cap on concurrent invocations (2 to 1000)
	Outbound       bool
}

// Function is one Lambda function: what it is built from, what it may touch
// and what invokes it. Adding a function to the product is one entry in
// Functions (and its directory under functions/); one that serves routes
// is also in shared/platform/catalog, which gives it its routes.
type Function struct {
	// Name is the directory under functions/ that the function is built
	// from (see bundle.go).
	Name string
	// Env is the function's environment struct (shared/platform/lambdamain); nil
	// is lambdamain.Environments[Name], what its main loads. Exactly its
	// required variables are set on the function, and they must agree with
	// the grants below (validateFunctions): a table's name with access to
	// that table, a queue's URL with sending to it, a secret's ARN with
	// reading it.
	Env      any
	MemoryMB int
	// Timeout is the function's timeout. A function with routes sets
	// Deadline instead, and its timeout is derived from it
	// (httpapi.FunctionTimeout, see withDerivedTimeouts).
	Timeout time.Duration
	// Deadline is the request deadline of a function with routes: what its
	// main gives httpapi.Config.Deadline (httpapi.DefaultDeadline unless it
	// runs conversation turns: httpapi.AgentDeadline). Its timeout leaves
	// httpapi.ResponseMargin after it, so that a request past its deadline
	// still gets its JSON 500 with request_id and its api_errors count
	// before Lambda ends the invocation.
	Deadline time.Duration

	// Tables is the function's access to each table it uses: exactly the
	// DynamoDB actions and index queries its code makes (access.go).
	Tables []Access
	// SendsToQueue grants sqs:SendMessage on the delivery queue.
	SendsToQueue bool
	// SendsToOutbound grants sqs:SendMessage on the outbound queue and
	// names it in OUTBOUND_QUEUE_URL.
	SendsToOutbound bool
	// ReadsTwilio gives the function the Twilio credentials secret (its
	// ARN in TWILIO_SECRET, read access) and the base host's public URL
	// in PUBLIC_BASE_URL, which Twilio calls back and signs.
	ReadsTwilio bool
	// InvokesProjectFunctions grants lambda:InvokeFunction on the Lambda
	// functions projects may name as their functions: those named
	// ProjectFunctionPrefix* in the stack's account and region.
	InvokesProjectFunctions bool
	// InvokesModels grants bedrock:InvokeModel on the foundation models of
	// context bedrockModels, and bedrock:ApplyGuardrail on the guardrails
	// of context bedrockGuardrails, in the stack's region (nothing when
	// they are empty): the functions that answer turns of Bedrock agents
	// (bedrock.go).
	InvokesModels bool
	// LinksConsole sets CONSOLE_URL, the console on the studio host: the
	// dispatcher's Slack and PagerDuty messages link to it, and so do the
	// payloads the webhooks function shows in the delivery log.
	LinksConsole bool
	// InvokesItself grants lambda:InvokeFunction on the function itself
	// and sets its asynchronous invocations to run once, within a minute:
	// the calls function runs each claimed step of a voice call in an
	// asynchronous invocation of its own (shared/calls/stepinvoke says why
	// not a queue), whose failure is recovered by the step's lease, never by
	// Lambda's retry (which could run the step beside its takeover).
	InvokesItself bool
	// ReadsInternalKey gives the function the internal key's secret: its
	// ARN in INTERNAL_KEY_PARAMETER and read access to it. Only functions
	// whose environment struct names the variable (their main reads the
	// key on the first internal request) get it: validateFunctions.
	ReadsInternalKey bool

	// Triggers; a function has routes, a schedule, or a queue (one kind).
	// Routes are derived from the catalog (shared/platform/catalog): one per path
	// of the function's groups (withCatalogRoutes), never written here.
	// Every route is ANY: a wrong method reaches the function that owns
	// the path, which answers 405 with Allow (API Gateway would answer
	// 404 {"message":"Not Found"} itself).
	Routes []Route
	// DefaultRoute makes the function the $default route of every host's
	// API: it answers the requests no route matches with the service's
	// JSON 404 in the host's error shape (the stage variable
	// httpapi.FamilyStageVariable names it).
	DefaultRoute bool
	// Throttle, when set, is the ceiling of each of the function's routes
	// on its stage (below the stage's own). Like the stage's, it is a
	// safety ceiling of the region, not a tenant's limit: those are per
	// API key, in the functions (shared/platform/ratelimit). docs/capacity.md has
	// the arithmetic.
	Throttle *Throttle
	// Reserved is the function's reserved concurrency: capacity of its
	// own, and its cap. The alerting path's (evaluator, dispatcher,
	// dialer) is theirs whatever the API does; the API functions' caps
	// keep a flood of requests within theirs. Context
	// reservedConcurrency.<name> overrides it; docs/capacity.md has the
	// arithmetic.
	Reserved int
	// Every runs the function on an EventBridge schedule with this period.
	Every time.Duration
	// Queue makes the function the consumer of the delivery queue.
	Queue *QueueConsumer

	// With a schedule (Every), the rule evaluator's two other sources
	// (evaluator.go):
	// MetricsStream makes the function the consumer of the metrics
	// table's stream: the rules of the scopes whose data was stored are
	// evaluated within about a second.
	MetricsStream bool
	// ShardFanout gives the function a queue of its own (SHARD_QUEUE_URL)
	// that its scheduled run fills with one message per rule shard and
	// that it consumes, so the shards are evaluated in parallel
	// invocations.
	ShardFanout bool
}

// gatewayRoutes returns the API Gateway routes of a catalog function: one
// ANY route per path of its groups, a ServeMux "{rest...}" becoming API
// Gateway's greedy "{rest+}".
func gatewayRoutes(f catalog.Function) []Route {
	var rs []Route
	for _, g := range f.Groups {
		for _, r := range g.Routes {
			path := r.Path
			if strings.HasSuffix(path, "...}") {
				path = strings.TrimSuffix(path, "...}") + "+}"
			}
			rt := Route{Host: g.Host, Method: "ANY", Path: path}
			if !slices.Contains(rs, rt) {
				rs = append(rs, rt)
			}
		}
	}
	return rs
}

// withCatalogRoutes gives each function of the catalog its API Gateway
// routes (gatewayRoutes).
func withCatalogRoutes(fns []Function) []Function {
	for i, f := range fns {
		if cf, ok := catalog.Lookup(f.Name); ok {
			fns[i].Routes = gatewayRoutes(cf)
		}
	}
	return fns
}

// withDerivedTimeouts gives each function with a request Deadline and no
// Timeout the timeout derived from the deadline: the one place where the
// two meet.
func withDerivedTimeouts(fns []Function) []Function {
	for i, f := range fns {
		if f.Deadline > 0 && f.Timeout == 0 {
			fns[i].Timeout = httpapi.FunctionTimeout(f.Deadline)
		}
	}
	return fns
}

// Functions is every Lambda function of a regional stack.
var Functions = withDerivedTimeouts(withCatalogRoutes([]Function{
	{
		// Also our additions: the rules' history, the metric series
		// (reads the metrics table), the preview, and the console's files.
		Name: "alerts", MemoryMB: 256, Deadline: httpapi.DefaultDeadline,
		Tables: []Access{
			// Rules with their account's counter (transactions: Put, Update,
			// Delete, and a ConditionCheck of the rule's project), the
			// evaluation marks, endpoints for the fan-out, keys, projects;
			// silences (a Query; a create's transaction: Update of the
			// account's silences_version and Put; an end's: Delete and Put).
			// Unused by the stack scenarios, kept: DeleteItem, the Delete of
			// DELETE /v1/alert-rules/{id}'s transaction.
			on(tables.Config, getItem, query, putItem, updateItem, deleteItem, conditionCheck),
			// The events of a rule's transaction and their deliveries; the
			// rules' history (Query) with its deliveries (GetItem).
			// Unused by the scenarios, kept: all four. PutItem and UpdateItem
			// are the alerts.resolved event of deleting or disabling a firing
			// rule, its deliveries and fanned-out mark (Outbox.Fanout);
			// Query and GetItem the history routes.
			on(tables.Deliveries, getItem, query, putItem, updateItem),
			// api_errors (UpdateItem ADD), the wake-ups of a rule's or an
			// ended silence's scope (the Put of a touch in the change's
			// own transaction), and the metric series and preview
			// (Query of minutes and roll-ups; a read compacts the closed
			// minutes it finds: a conditional PutItem). Unused by the
			// scenarios, kept: UpdateItem (a failed request's api_errors),
			// Query (GET /v1/metrics and the preview).
			on(tables.Metrics, updateItem, putItem, query),
			requestGuards,
		},
		// Deleting or disabling a firing rule sends alerts.resolved (unused
		// by the scenarios, kept).
		SendsToQueue: true,
		Throttle:     &Throttle{RateLimit: 200, BurstLimit: 400},
		Reserved:     50,
	},
	{
		Name: "webhooks", MemoryMB: 256, Deadline: httpapi.DefaultDeadline,
		Tables: []Access{
			// Endpoints with their account's counter (transactions: Put,
			// Update, Delete), keys, projects. Unused by the stack scenarios,
			// kept: DeleteItem, the Delete of DELETE
			// /v1/webhook-endpoints/{id}'s transaction.
			on(tables.Config, getItem, query, putItem, updateItem, deleteItem),
			// The delivery log (its index), test events (the event and its
			// delivery: Puts of one transaction), retries, fan-out.
			on(tables.Deliveries, getItem, putItem, updateItem).index("gsi1"),
			on(tables.Metrics, updateItem), // a failed request's api_errors (unused by the scenarios, kept)
			requestGuards,
		},
		SendsToQueue: true, // test and retry enqueue deliveries
		Throttle:     &Throttle{RateLimit: 100, BurstLimit: 200},
		Reserved:     25,
		LinksConsole: true, // the delivery log's payloads of Slack and PagerDuty messages
	},
	{
		// Drains the delivery queue: signs and sends each attempt, writes
		// the delivery log, and queues the next attempt of the schedule.
		Name: "dispatcher", MemoryMB: 256, Timeout: DispatcherTimeout,
		Tables: []Access{
			on(tables.Config, getItem),              // the endpoint of each delivery
			on(tables.Deliveries, getItem, putItem), // the delivery and its event; each attempt
		},
		SendsToQueue: true, // retries and early messages go back to the queue
		Queue:        &QueueConsumer{BatchSize: 10, MaxConcurrency: 20},
		Reserved:     20, // the queue mapping's MaxConcurrency
		LinksConsole: true,
	},
	{
		// Drains the outbound queue: places each queued call through
		// Twilio at its account's pace (a slot item on the calls table),
		// and fails calls that no report ended in time. A job whose slot is
		// more than a few seconds away goes back to the queue with a delay,
		// so an invocation waits at most dialer.DefaultMaxWait plus Twilio.
		Name: "dialer", MemoryMB: 256, Timeout: DialerTimeout,
		Tables: []Access{
			on(tables.Calls, getItem, updateItem), // the call and its moves; the account's pacing slot
		},
		SendsToOutbound: true, // delayed jobs and timeout checks
		ReadsTwilio:     true,
		Queue:           &QueueConsumer{BatchSize: 10, MaxConcurrency: 5, Outbound: true},
		Reserved:        5, // the queue mapping's MaxConcurrency
	},
	{
		// The internal metric intake: telephony and the agent runtime post
		// metric events with the internal key (read from Secrets Manager at
		// cold start).
		Name: "intake", MemoryMB: 256, Deadline: httpapi.DefaultDeadline,
		Tables: []Access{
			on(tables.Metrics, updateItem),
		},
		ReadsInternalKey: true,
		Throttle:         &Throttle{RateLimit: 2000, BurstLimit: 2000},
		Reserved:         100,
	},
	{
		// The evaluator writes rule states (config) with their events
		// (deliveries), reads the metric buckets (and compacts their closed
		// minutes: shared/store/dynamo/metriclayout.go), and queues deliveries.
		// The metrics table's stream runs it when data is stored; the
		// schedule repairs and fans out one message per rule shard.
		Name: "evaluator", MemoryMB: 512, Timeout: 55 * time.Second,
		Tables: []Access{
			// Rules (a shard's enabled rules from the index), their state
			// (Put, also in a transaction with its events and its history
			// entry), evaluation marks (Update), endpoints for the fan-out,
			// an account's silences not ended (a Query per account and run).
			// Unused by the stack scenarios, kept: GetItem, a rule read
			// again after a write another writer won, and a test event's
			// one endpoint when the repair fans it out.
			on(tables.Config, getItem, query, putItem, updateItem).index("gsi1"),
			// The buckets of a window, the compaction of closed minutes it
			// reads (a conditional PutItem); the hourly roll-ups (PutItem).
			// It writes no metric (no UpdateItem). Unused by the scenarios,
			// kept: PutItem, which their minutes never reach (a minute is
			// compacted once closed, an hour rolled up once over).
			on(tables.Metrics, query, putItem),
			// Events (Put, in the rule's transaction), deliveries, fanned-out
			// marks; the pending events of the repair (the index).
			on(tables.Deliveries, putItem, updateItem).index("gsi1"),
		},
		SendsToQueue:  true,
		Every:         time.Minute,
		MetricsStream: true,
		ShardFanout:   true,
		Reserved:      100, // evaluatorNeeds: 16 shards, 16 stream shards × 5 lanes, the schedule
	},
	{
		// The idle sweep: every minute, on the evaluator's rule, it ends
		// the conversations idle past their due, read from the
		// conversations table's sparse index of open conversations (no
		// scan), and runs their on_end functions.
		Name: "sweeper", MemoryMB: 256, Timeout: 50 * time.Second,
		Tables: []Access{
			on(tables.Config, getItem), // the project's agent configuration
			// The due conversations (the idle index, and the open index
			// it replaces for conversations written before it), each
			// read again and ended (Put).
			// (The end's commit may be an UpdateItem: turnwrite.go; unused
			// by the stack scenarios, whose conversations' turns_to is
			// known, kept.)
			on(tables.Conversations, getItem, putItem, updateItem).index(tables.IdleGSI.Name).index(tables.OpenGSI.Name),
			on(tables.Metrics, updateItem),
		},
		InvokesProjectFunctions: true,
		Every:                   time.Minute,
		Reserved:                5,
	},
	{
		// Chat conversations (the base host): the agent, the project's functions,
		// the conversation store and the metrics of every turn.
		Name: "chat", MemoryMB: 512, Deadline: httpapi.AgentDeadline, InvokesModels: true,
		Tables: []Access{
			on(tables.Config, getItem), // keys, projects, the agent configuration
			// Conversations and turns (Puts, also in transactions; a
			// conversation's commit is an UpdateItem when its turns_to is
			// not known; a turn whose commit is refused is deleted again).
			// Unused by the stack scenarios, kept: UpdateItem and
			// DeleteItem, those two rarer paths. Query: a Bedrock agent's
			// history, the conversation's turns partition (Store.Turns).
			on(tables.Conversations, getItem, putItem, updateItem, deleteItem, query),
			on(tables.Metrics, updateItem), // the turns' metrics; api_errors
			requestGuards,
		},
		InvokesProjectFunctions: true, // a project's hooks and Bedrock tools (the Bedrock scenarios' tool is a loopback URL, not a Lambda)
		Throttle:                &Throttle{RateLimit: 200, BurstLimit: 400},
		Reserved:                150,
	},
	{
		// A project's conversations (the base host): the conversations list (v3 and
		// v1), the concurrency series and the handoff state, reads of the
		// conversations table (the keys and projects are in the config
		// table). A week's series decodes some 100,000 items, and a list
		// page encodes up to 5 MiB: 1 GB for the CPU that comes with it.
		Name: "conversations", MemoryMB: 1024, Deadline: httpapi.DefaultDeadline,
		Tables: []Access{
			on(tables.Config, getItem), // keys, projects
			// A page's turns: by key (BatchGetItem), or the turns index
			// for conversations written before turns_to. Its one write: a
			// project's hour index legacy marker (Put, once per project;
			// shared/store/dynamo/hourindex.go).
			// Unused by the stack scenarios, kept: the marker's PutItem
			// (their projects are new) and the turns index (their
			// conversations have turns_to).
			on(tables.Conversations, getItem, putItem, query, batchGetItem).index(tables.TurnsGSI.Name),
			on(tables.Metrics, updateItem), // its own api_errors (unused by the scenarios, kept)
			// The rate limit alone: it serves no create-like route, so no
			// Idempotency-Key record.
			rateLimitOnly,
		},
		// Its pages and series are the most expensive reads of the API:
		// a ceiling per route below the stage's.
		Throttle: &Throttle{RateLimit: 500, BurstLimit: 1000},
		Reserved: 100,
	},
	{
		// The telephony system's voice intake (internal key), DNI, and
		// Twilio's callbacks of outbound calls (signed with the account's
		// Twilio auth token): status reports move the call (calls table),
		// the answer URL and the speech turns run the call's conversation.
		Name: "calls", MemoryMB: 512, Deadline: httpapi.AgentDeadline, InvokesModels: true,
		Tables: []Access{
			// Keys, projects, the agent configuration, and the DNI pools
			// (Reserve: Query and Update; Consume: Update).
			on(tables.Config, getItem, query, updateItem),
			// As chat's: turns, and their commits (shared/store/dynamo/turnwrite.go);
			// UpdateItem and DeleteItem unused by the stack scenarios, kept;
			// Query, a Bedrock agent's history.
			on(tables.Conversations, getItem, putItem, updateItem, deleteItem, query),
			on(tables.Calls, getItem, updateItem), // Twilio's callbacks move the call
			on(tables.Metrics, updateItem),
			requestGuards,
		},
		InvokesProjectFunctions: true, // a project's hooks and Bedrock tools (the Bedrock scenarios' tool is a loopback URL, not a Lambda)
		ReadsInternalKey:        true, // the voice intake's internal routes (no scenario calls them)
		ReadsTwilio:             true,
		InvokesItself:           true, // a voice call's step (the answer, a turn) runs in its own invocation
		Throttle:                &Throttle{RateLimit: 200, BurstLimit: 400},
		Reserved:                150,
	},
	{
		// Outbound calling: trigger and status (service key) and the
		// internal route the telephony system moves a call's status with.
		// Apart from calls because it alone checks phone numbers against
		// the numbering plans (shared/calls/phone).
		Name: "outbound", MemoryMB: 256, Deadline: httpapi.DefaultDeadline,
		Tables: []Access{
			on(tables.Config, getItem), // keys, projects
			// UpdateItem: the internal status route moves a call (unused by
			// the stack scenarios, where Twilio's callbacks to calls do), and
			// the trigger gives up a call whose dial job could not be sent.
			on(tables.Calls, getItem, putItem, updateItem),
			on(tables.Metrics, updateItem), // a failed request's api_errors (unused by the scenarios, kept)
			requestGuards,
		},
		ReadsInternalKey: true, // the internal status route (no scenario calls it)
		SendsToOutbound:  true, // the trigger's dial job
		Throttle:         &Throttle{RateLimit: 100, BurstLimit: 200},
		Reserved:         50,
	},
	{
		// The $default route of both hosts: the JSON 404 of a path no
		// route matches (a wrong method on a known path is its own
		// function's 405).
		Name: "notfound", MemoryMB: 128, Deadline: httpapi.DefaultDeadline,
		DefaultRoute: true,
		Throttle:     &Throttle{RateLimit: 100, BurstLimit: 200},
		Reserved:     10,
	},
	{
		// Notifications pushed into conversations (the base host, events key): the
		// external events webhook and the bridge-ended notification run the
		// project's functions and write the conversation's state.
		// No stack scenario calls it: every grant below is the code's
		// (the events tests under shared/conversations/eventsapi run these paths).
		Name: "events", MemoryMB: 512, Deadline: httpapi.AgentDeadline,
		Tables: []Access{
			on(tables.Config, getItem), // keys, projects, the agent configuration
			// The conversation's commit: a PutItem, or an UpdateItem when
			// its turns_to is not known.
			on(tables.Conversations, getItem, putItem, updateItem),
			on(tables.Metrics, updateItem),
			requestGuards,
		},
		InvokesProjectFunctions: true,
		Throttle:                &Throttle{RateLimit: 200, BurstLimit: 400},
		Reserved:                75,
	},
}))

// ProjectFunctionPrefix starts the name of every Lambda function a project
// may use as one of its functions (hooks): the grant stays narrow.
const ProjectFunctionPrefix = "voiceops-fn-"

// Limits of the Lambda service and of this stack.
const (
	minMemoryMB = 128
	maxMemoryMB = 10240
	maxTimeout  = 15 * time.Minute
	// maxAPITimeout is API Gateway's integration timeout for HTTP APIs.
	maxAPITimeout = 30 * time.Second
)

var (
	validName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	validPath = regexp.MustCompile(`^(/[A-Za-z0-9._~-]+|/\{[A-Za-z_][A-Za-z0-9_]*\})*(/\{[A-Za-z_][A-Za-z0-9_]*\+\})?$`)
)

// validateFunctions checks a function list before any construct is made, so
// that a bad entry fails with a message naming it.
func validateFunctions(fns []Function) error {
	var errs []error
	names := map[string]bool{}
	routes := map[Route]string{}
	consumers := map[bool]int{} // by QueueConsumer.Outbound
	defaults := 0
	for _, f := range fns {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("function %q: %s", f.Name, fmt.Sprintf(format, args...)))
		}
		if !validName.MatchString(f.Name) {
			bad("name must match %s", validName)
		}
		if names[f.Name] {
			bad("listed twice")
		}
		names[f.Name] = true
		if f.MemoryMB < minMemoryMB || f.MemoryMB > maxMemoryMB {
			bad("memory %d MB is outside %d to %d", f.MemoryMB, minMemoryMB, maxMemoryMB)
		}
		if f.Timeout < time.Second || f.Timeout > maxTimeout || f.Timeout%time.Second != 0 {
			bad("timeout %s must be whole seconds from 1s to %s", f.Timeout, maxTimeout)
		}
		for _, msg := range checkAccess(f) {
			bad("%s", msg)
		}
		if f.Throttle != nil && ((len(f.Routes) == 0 && !f.DefaultRoute) || f.Throttle.RateLimit <= 0 || f.Throttle.BurstLimit <= 0) {
			bad("a route throttle needs routes and positive limits")
		}
		if public := slices.ContainsFunc(f.Routes, func(r Route) bool { return !strings.HasPrefix(r.Path, "/internal/") }); public {
			// Its keyed routes take rate limits, its create-like ones
			// Idempotency-Keys.
			if a, _ := f.accessTo(tables.Requests); !slices.Equal(a.Actions, requestGuards.Actions) && !slices.Equal(a.Actions, rateLimitOnly.Actions) {
				bad("has public routes, so it needs the request guards' access to the %s table (%v, or %v without create-like routes)", tables.Requests.ID, requestGuards.Actions, rateLimitOnly.Actions)
			}
		}
		kinds := 0
		if f.DefaultRoute {
			defaults++
			if len(f.Routes) > 0 {
				bad("the $default route's function has no routes of its own")
			}
		}
		if len(f.Routes) > 0 || f.DefaultRoute {
			kinds++
			if f.Timeout > maxAPITimeout {
				bad("timeout %s exceeds the HTTP API integration timeout %s", f.Timeout, maxAPITimeout)
			}
			if f.Deadline <= 0 || f.Timeout-f.Deadline < httpapi.ResponseMargin {
				bad("timeout %s must leave httpapi.ResponseMargin (%s) after the request deadline %s", f.Timeout, httpapi.ResponseMargin, f.Deadline)
			}
		} else if f.Deadline != 0 {
			bad("a request deadline without routes")
		}
		if f.Every != 0 {
			kinds++
			if f.Every < time.Minute || f.Every%time.Minute != 0 {
				bad("schedule period %s must be whole minutes", f.Every)
			}
			if f.Timeout >= f.Every {
				bad("timeout %s must be shorter than the schedule period %s", f.Timeout, f.Every)
			}
		}
		if f.Queue != nil {
			kinds++
			consumers[f.Queue.Outbound]++
			if limit, name := consumerTimeout(f.Queue.Outbound); f.Timeout > limit {
				bad("timeout %s exceeds %s %s, which sets the queue's visibility timeout", f.Timeout, name, limit)
			}
			if f.Queue.BatchSize < 1 || f.Queue.BatchSize > 10 {
				bad("queue batch size %d is outside 1 to 10", f.Queue.BatchSize)
			}
			if f.Queue.MaxConcurrency < 2 || f.Queue.MaxConcurrency > 1000 {
				bad("queue max concurrency %d is outside 2 to 1000", f.Queue.MaxConcurrency)
			}
		}
		if kinds != 1 {
			bad("needs exactly one trigger kind (routes, Every or Queue), has %d", kinds)
		}
		for _, msg := range envDisagreements(f) {
			bad("%s", msg)
		}
		if (f.MetricsStream || f.ShardFanout) && f.Every == 0 {
			bad("MetricsStream and ShardFanout come with a schedule (Every)")
		}
		if a, _ := f.accessTo(tables.Metrics); f.MetricsStream && !slices.Contains(a.Actions, query) {
			bad("MetricsStream needs to Query the metrics table")
		}
		for _, r := range f.Routes {
			if r.Host != StudioHost && r.Host != BaseHost {
				bad("route %v: unknown host %q", r, r.Host)
			}
			if r.Method != "ANY" {
				bad("route %v: method %q must be ANY, so that a wrong method is the function's 405 with Allow", r, r.Method)
			}
			if r.Path == "" || !validPath.MatchString(r.Path) {
				bad("route %v: path must be /segments with an optional final {proxy+}", r)
			}
			if other, dup := routes[r]; dup {
				bad("route %v is also served by %q", r, other)
			}
			routes[r] = f.Name
		}
	}
	if defaults > 1 {
		errs = append(errs, fmt.Errorf("%d functions take the $default route; at most one may", defaults))
	}
	if consumers[false] > 1 {
		errs = append(errs, fmt.Errorf("%d functions consume the delivery queue; at most one may", consumers[false]))
	}
	if consumers[true] > 1 {
		errs = append(errs, fmt.Errorf("%d functions consume the outbound queue; at most one may", consumers[true]))
	}
	return errors.Join(errs...)
}

// envOf is the environment struct of a function.
func envOf(f Function) any {
	if f.Env != nil {
		return f.Env
	}
	return lambdamain.Environments[f.Name]
}

// envDisagreements lists where a function's environment and its grants
// disagree: each variable must name something the function may use, and
// each thing it may use must be named.
func envDisagreements(f Function) []string {
	env := envOf(f)
	if env == nil {
		return []string{"no environment: add its struct to lambdamain.Environments"}
	}
	names := map[string]bool{}
	for _, n := range lambdamain.Names(env) {
		names[n] = true
	}
	var out []string
	agree := func(name string, granted bool, grant string) {
		if names[name] != granted {
			out = append(out, fmt.Sprintf("environment names %s: %v, but %s: %v", name, names[name], grant, granted))
		}
		delete(names, name)
	}
	for _, t := range tables.All {
		_, access := f.accessTo(t)
		agree(t.EnvVar, access, "access to the "+t.ID+" table")
	}
	agree(lambdamain.QueueEnv, f.SendsToQueue, "SendsToQueue")
	agree(lambdamain.OutboundQueueEnv, f.SendsToOutbound, "SendsToOutbound")
	agree(lambdamain.ShardQueueEnv, f.ShardFanout, "ShardFanout")
	agree(lambdamain.InternalKeyEnv, f.ReadsInternalKey, "ReadsInternalKey")
	agree(lambdamain.TwilioSecretEnv, f.ReadsTwilio, "ReadsTwilio")
	agree(lambdamain.PublicBaseURLEnv, f.ReadsTwilio, "ReadsTwilio (Twilio calls the base host back)")
	agree(lambdamain.ConsoleBaseURLEnv, servesConsole(f), "a /console route (the console calls the base host)")
	agree(lambdamain.ConsoleURLEnv, f.LinksConsole, "LinksConsole")
	delete(names, lambdamain.RegionEnv) // the stack's region: any function may read it
	for n := range names {
		out = append(out, fmt.Sprintf("environment names %s, which infra does not set", n))
	}
	slices.Sort(out)
	return out
}

// deps are the resources of a stack that functions are wired to.
type deps struct {
	tables      map[string]awsdynamodb.Table // by tables.Table.ID
	queue       queueResources
	internalKey internalKey
	twilio      awssecretsmanager.Secret
}

// newFunctions creates every function with its environment and grants, and
// returns them by name.
func newFunctions(stack awscdk.Stack, cfg StackConfig, fns []Function, d deps) (map[string]awslambda.Function, error) {
	// The value of each variable; PUBLIC_BASE_URL, CONSOLE_BASE_URL and
	// SHARD_QUEUE_URL are added with the base host's API (baseURLEnv) and
	// the shard queue (addEvaluatorSources).
	values := map[string]*string{
		lambdamain.RegionEnv:        jsii.String(cfg.Region.Name),
		lambdamain.QueueEnv:         d.queue.delivery.QueueUrl(),
		lambdamain.OutboundQueueEnv: d.queue.outbound.QueueUrl(),
		lambdamain.InternalKeyEnv:   d.internalKey.secret.SecretArn(),
		lambdamain.TwilioSecretEnv:  d.twilio.SecretArn(),
	}
	for _, t := range tables.All {
		values[t.EnvVar] = jsii.String(tables.PhysicalName(cfg.prefix(), t))
	}

	out := map[string]awslambda.Function{}
	for _, f := range fns {
		// Only what the function's main reads (its environment struct).
		env := map[string]*string{}
		for _, name := range lambdamain.Names(envOf(f)) {
			if v, ok := values[name]; ok {
				env[name] = v
			}
		}
		fn, err := newGoFunction(stack, constructID(f.Name), f.Name, cfg.Bundler, awslambda.FunctionProps{
			Description:   jsii.String(fmt.Sprintf("VoiceOps %s (%s)", f.Name, cfg.Region.Name)),
			MemorySize:    jsii.Number(f.MemoryMB),
			Timeout:       awscdk.Duration_Seconds(jsii.Number(f.Timeout.Seconds())),
			Environment:   &env,
			LoggingFormat: awslambda.LoggingFormat_JSON,
			Tracing:       awslambda.Tracing_ACTIVE,
			// A scheduled run that fails is not retried: the next tick
			// redoes the work. Other async invocations keep the default.
			RetryAttempts:                retryAttempts(f),
			MaxEventAge:                  maxEventAge(f),
			ReservedConcurrentExecutions: reservedConcurrency(cfg.reserved(f)),
		}, cfg.removalPolicy())
		if err != nil {
			return nil, err
		}
		grantTables(fn, f, d.tables)
		if f.SendsToQueue {
			grantSend(fn, d.queue.delivery.QueueArn())
		}
		if f.InvokesProjectFunctions {
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("lambda:InvokeFunction"), Resources: jsii.Strings(projectFunctionsArn()),
			}))
		}
		if f.InvokesModels {
			grantModels(fn, cfg.Bedrock)
		}
		if f.InvokesItself {
			// A policy of its own: in the role's default policy, which the
			// function depends on, its own ARN would be a cycle.
			awsiam.NewPolicy(stack, jsii.String(constructID(f.Name)+"InvokesItself"), &awsiam.PolicyProps{
				Roles: &[]awsiam.IRole{fn.Role()},
				Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{fn.FunctionArn()},
				})},
			})
		}
		if f.ReadsInternalKey {
			grantSecretValue(fn, d.internalKey.secret.SecretArn())
		}
		if f.SendsToOutbound {
			grantSend(fn, d.queue.outbound.QueueArn())
		}
		if f.ReadsTwilio {
			grantSecretValue(fn, d.twilio.SecretArn())
		}
		out[f.Name] = fn
	}
	return out, nil
}

// newGoFunction creates a Lambda function running functions/<name>: Go on
// the provided.al2023 runtime, arm64, its code built by b (bundle.go), with
// its own log group (kept on delete by removal) and a voiceops-function
// tag naming it. props gives the rest. A failed build is returned as the error.
func newGoFunction(stack awscdk.Stack, id, name string, b *Bundler, props awslambda.FunctionProps, removal awscdk.RemovalPolicy) (fn awslambda.Function, err error) {
	props.Runtime = awslambda.Runtime_PROVIDED_AL2023()
	props.Architecture = awslambda.Architecture_ARM_64()
	props.Handler = jsii.String("bootstrap")
	props.LogGroup = awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: removal, // its logs are kept as the tables are
	})
	defer func() {
		// The build runs inside the jsii call that stages the asset; its
		// failure comes back as a panic of that call.
		if r := recover(); r != nil {
			if err = b.failure(name); err == nil {
				err = fmt.Errorf("function %s: %v", name, r)
			}
		}
	}()
	props.Code = b.code(name)
	fn = awslambda.NewFunction(stack, jsii.String(id), &props)
	awscdk.Tags_Of(fn).Add(jsii.String(FunctionTag), jsii.String(name), nil)
	// The stack runner (scripts/stack) finds each function's source by this
	// metadata, not by guessing from logical IDs.
	fn.Node().DefaultChild().(awscdk.CfnResource).AddMetadata(jsii.String(FunctionMetadata), name)
	dependOnPoliciesNotRole(fn.Role())
	return fn, nil
}

// FunctionTag tags every function (and its role) with the function's name,
// the directory under functions/ it is built from; scripts/checkbundles
// reads it to find each function's bundle in cdk.out.
const FunctionTag = "voiceops-function"

// FunctionMetadata is the CloudFormation Metadata key on each
// AWS::Lambda::Function naming the directory under functions/ it is built
// from (scripts/stack reads it).
const FunctionMetadata = "voiceops:function"

// rolePolicies stands for a function's role wherever the role is a
// dependency. CDK makes each function DependsOn its role, so that the
// function is not created before its permissions exist; that names both the
// AWS::IAM::Role and its policies. The role half is redundant: the
// function's Role property already references the role with Fn::GetAtt
// (cfn-lint W3005). As a dependency, the role is therefore its policies
// alone: every child construct but the AWS::IAM::Role, read when the app is
// prepared, after every grant. A policy references its role, so depending on
// it still orders the function after the role.
type rolePolicies struct {
	constructs.Dependable
	role awsiam.IRole
}

// DependencyRoots implements constructs.Dependable.
func (r *rolePolicies) DependencyRoots() *[]constructs.IConstruct {
	roots := []constructs.IConstruct{}
	var self string
	if c := r.role.Node().DefaultChild(); c != nil {
		self = *c.Node().Path()
	}
	for _, c := range *r.role.Node().Children() {
		if *c.Node().Path() != self {
			roots = append(roots, c)
		}
	}
	return &roots
}

// dependOnPoliciesNotRole makes whatever depends on role depend on its
// policies only (see rolePolicies).
func dependOnPoliciesNotRole(role awsiam.IRole) {
	p := &rolePolicies{role: role}
	constructs.NewDependable_Override(p)
	constructs.Dependable_Implement(role, p)
}

// reservedConcurrency is nil (no reservation) for 0.
func reservedConcurrency(n int) *float64 {
	if n <= 0 {
		return nil
	}
	return jsii.Number(n)
}

func retryAttempts(f Function) *float64 {
	if f.Every != 0 || f.InvokesItself {
		return jsii.Number(0)
	}
	return nil
}

// maxEventAge drops a step's event that waited a minute in Lambda's
// queue: its lease (calls.DefaultStepLease, 30 s) has passed, so the step
// is the callee's to say again.
func maxEventAge(f Function) awscdk.Duration {
	if f.InvokesItself {
		return awscdk.Duration_Seconds(jsii.Number(60))
	}
	return nil
}

// constructID turns "alert-rules" into "AlertRules".
func constructID(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
