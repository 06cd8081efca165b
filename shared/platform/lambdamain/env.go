package lambdamain

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// A function's environment is a struct of this file, one per function:
// each field names its variable in an `env` tag, and Load reads and checks
// them all at start, so that a main reads named fields, never values by
// position, and a missing variable stops the function with a message
// naming it. Environments lists the struct of every function; infra sets
// on each function exactly the required variables of its struct, so a
// function and its environment cannot disagree.
//
// Field types: string, and voiceops.RegionInfo (SERVICE_REGION: us, uk,
// eu). A tag `env:"NAME,optional"` marks a variable infra does not set (a
// test double's address); it may be empty.

// TwilioAPIEnv, when set, replaces Twilio's API base URL (a test double
// of the dialer's tests and of a local stack).
const TwilioAPIEnv = "TWILIO_API_BASE_URL"

// Alerts is the environment of functions/alerts.
type Alerts struct {
	Region          voiceops.RegionInfo `env:"SERVICE_REGION"`
	ConfigTable     string              `env:"CONFIG_TABLE"`
	DeliveriesTable string              `env:"DELIVERIES_TABLE"`
	MetricsTable    string              `env:"METRICS_TABLE"`
	RequestsTable   string              `env:"REQUESTS_TABLE"`
	DeliveryQueue   string              `env:"DELIVERY_QUEUE_URL"`
	// The base host's URL, which the console it serves calls.
	ConsoleBaseURL string `env:"CONSOLE_BASE_URL"`
}

// Webhooks is the environment of functions/webhooks.
type Webhooks struct {
	Region          voiceops.RegionInfo `env:"SERVICE_REGION"`
	ConfigTable     string              `env:"CONFIG_TABLE"`
	DeliveriesTable string              `env:"DELIVERIES_TABLE"`
	MetricsTable    string              `env:"METRICS_TABLE"`
	RequestsTable   string              `env:"REQUESTS_TABLE"`
	DeliveryQueue   string              `env:"DELIVERY_QUEUE_URL"`
	// ConsoleURL is the console on the studio host: a Slack or PagerDuty
	// delivery's payload, as the delivery log shows it, links to it as
	// the dispatcher's message does.
	ConsoleURL string `env:"CONSOLE_URL"`
}

// Dispatcher is the environment of functions/dispatcher.
type Dispatcher struct {
	ConfigTable     string `env:"CONFIG_TABLE"`
	DeliveriesTable string `env:"DELIVERIES_TABLE"`
	DeliveryQueue   string `env:"DELIVERY_QUEUE_URL"`
	// The console that Slack and PagerDuty messages link to.
	ConsoleURL string `env:"CONSOLE_URL"`
}

// Dialer is the environment of functions/dialer.
type Dialer struct {
	CallsTable    string `env:"CALLS_TABLE"`
	OutboundQueue string `env:"OUTBOUND_QUEUE_URL"`
	TwilioSecret  string `env:"TWILIO_SECRET"`
	PublicBaseURL string `env:"PUBLIC_BASE_URL"`
	TwilioAPI     string `env:"TWILIO_API_BASE_URL,optional"`
}

// Intake is the environment of functions/intake.
type Intake struct {
	MetricsTable      string `env:"METRICS_TABLE"`
	InternalKeySecret string `env:"INTERNAL_KEY_PARAMETER"`
}

// Evaluator is the environment of functions/evaluator.
type Evaluator struct {
	ConfigTable     string `env:"CONFIG_TABLE"`
	MetricsTable    string `env:"METRICS_TABLE"`
	DeliveriesTable string `env:"DELIVERIES_TABLE"`
	DeliveryQueue   string `env:"DELIVERY_QUEUE_URL"`
	ShardQueue      string `env:"SHARD_QUEUE_URL"`
}

// Sweeper is the environment of functions/sweeper.
type Sweeper struct {
	ConfigTable        string `env:"CONFIG_TABLE"`
	ConversationsTable string `env:"CONVERSATIONS_TABLE"`
	MetricsTable       string `env:"METRICS_TABLE"`
}

// Conversations is the environment of functions/conversations, and of
// functions/chat and functions/events (Chat, Events).
type Conversations struct {
	Region             voiceops.RegionInfo `env:"SERVICE_REGION"`
	ConfigTable        string              `env:"CONFIG_TABLE"`
	ConversationsTable string              `env:"CONVERSATIONS_TABLE"`
	MetricsTable       string              `env:"METRICS_TABLE"`
	RequestsTable      string              `env:"REQUESTS_TABLE"`
}

// Chat is the environment of functions/chat.
type Chat Conversations

// Events is the environment of functions/events.
type Events Conversations

// Calls is the environment of functions/calls.
type Calls struct {
	Region             voiceops.RegionInfo `env:"SERVICE_REGION"`
	ConfigTable        string              `env:"CONFIG_TABLE"`
	ConversationsTable string              `env:"CONVERSATIONS_TABLE"`
	MetricsTable       string              `env:"METRICS_TABLE"`
	RequestsTable      string              `env:"REQUESTS_TABLE"`
	CallsTable         string              `env:"CALLS_TABLE"`
	InternalKeySecret  string              `env:"INTERNAL_KEY_PARAMETER"`
	TwilioSecret       string              `env:"TWILIO_SECRET"`
	PublicBaseURL      string              `env:"PUBLIC_BASE_URL"`
}

// Outbound is the environment of functions/outbound.
type Outbound struct {
	Region            voiceops.RegionInfo `env:"SERVICE_REGION"`
	ConfigTable       string              `env:"CONFIG_TABLE"`
	MetricsTable      string              `env:"METRICS_TABLE"`
	CallsTable        string              `env:"CALLS_TABLE"`
	RequestsTable     string              `env:"REQUESTS_TABLE"`
	InternalKeySecret string              `env:"INTERNAL_KEY_PARAMETER"`
	OutboundQueue     string              `env:"OUTBOUND_QUEUE_URL"`
}

// NotFound is the environment of functions/notfound: none.
type NotFound struct{}

// Environments is the environment struct of every function of a regional
// stack, by its directory under functions/.
var Environments = map[string]any{
	"alerts": Alerts{}, "webhooks": Webhooks{}, "dispatcher": Dispatcher{}, "dialer": Dialer{},
	"intake": Intake{}, "evaluator": Evaluator{}, "sweeper": Sweeper{}, "chat": Chat{},
	"conversations": Conversations{}, "calls": Calls{}, "outbound": Outbound{}, "events": Events{},
	"notfound": NotFound{},
}

// Known lists every variable an environment struct may name: the
// constants of lambdamain.go, the tables' (shared/platform/tables) and TwilioAPIEnv.
func Known() []string {
	names := []string{RegionEnv, QueueEnv, ShardQueueEnv, OutboundQueueEnv, TwilioSecretEnv, PublicBaseURLEnv, ConsoleBaseURLEnv, ConsoleURLEnv, InternalKeyEnv, TwilioAPIEnv}
	for _, t := range tables.All {
		names = append(names, t.EnvVar)
	}
	return names
}

// Load reads the environment of the named function (Environments) into a
// T, which must be that function's struct. Every required variable must be
// set and not empty; the error names every one that is not.
func Load[T any](function string, getenv func(string) string) (T, error) {
	var env T
	want, ok := Environments[function]
	if !ok || reflect.TypeOf(want) != reflect.TypeOf(env) {
		return env, fmt.Errorf("functions/%s: its environment is %T (lambdamain.Environments), not %T", function, want, env)
	}
	v := reflect.ValueOf(&env).Elem()
	var missing, bad []string
	for i, f := range fields(v.Type()) {
		val := getenv(f.name)
		if val == "" {
			if !f.optional {
				missing = append(missing, f.name)
			}
			continue
		}
		switch field := v.Field(i); field.Interface().(type) {
		case string:
			field.SetString(val)
		case voiceops.RegionInfo:
			r, ok := voiceops.LookupRegion(val)
			if !ok {
				bad = append(bad, fmt.Sprintf("%s must be one of us, uk, eu; got %q", f.name, val))
			}
			field.Set(reflect.ValueOf(r))
		}
	}
	if len(missing) > 0 {
		// The form scripts/bench reads: "not set in the environment: [A B]".
		bad = append([]string{fmt.Sprintf("not set in the environment: %v", missing)}, bad...)
	}
	if len(bad) > 0 {
		return env, fmt.Errorf("functions/%s: %s", function, strings.Join(bad, "; "))
	}
	return env, nil
}

// Names lists the variables of an environment struct value that infra
// sets (its required ones), in field order.
func Names(env any) []string {
	var out []string
	for _, f := range fields(reflect.TypeOf(env)) {
		if !f.optional {
			out = append(out, f.name)
		}
	}
	return out
}

type envField struct {
	name     string
	optional bool
}

// fields reads the env tags of an environment struct type; a field without
// one, or of another type, is a programming error the tests catch.
func fields(t reflect.Type) []envField {
	out := make([]envField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, opt, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name == "" || (f.Type != reflect.TypeFor[string]() && f.Type != reflect.TypeFor[voiceops.RegionInfo]()) {
			panic(fmt.Sprintf("lambdamain: %s.%s needs an env tag and the type string or voiceops.RegionInfo", t.Name(), f.Name))
		}
		out[i] = envField{name: name, optional: opt == "optional"}
	}
	return out
}
