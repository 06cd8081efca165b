package apitest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/voiceops/opsapi/shared/alerts/alertgraph"
	"github.com/voiceops/opsapi/shared/alerts/alerting"
	"github.com/voiceops/opsapi/shared/alerts/console"
	"github.com/voiceops/opsapi/shared/alerts/studioapi"
	"github.com/voiceops/opsapi/shared/calls"
	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/outboundapi"
	"github.com/voiceops/opsapi/shared/calls/phone"
	"github.com/voiceops/opsapi/shared/conversations/chatapi"
	"github.com/voiceops/opsapi/shared/conversations/conversation"
	"github.com/voiceops/opsapi/shared/conversations/conversationsapi"
	"github.com/voiceops/opsapi/shared/conversations/eventsapi"
	"github.com/voiceops/opsapi/shared/conversations/voiceapi"
	"github.com/voiceops/opsapi/shared/metrics"
	"github.com/voiceops/opsapi/shared/metrics/buckets"
	"github.com/voiceops/opsapi/shared/metrics/series"
	"github.com/voiceops/opsapi/shared/platform/auth"
	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/telemetry"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Deps is what the tests hand to the groups: the union of their
// dependencies, composed the way scripts/dev composes them, through the
// functions' graph constructors (shared/conversations/convgraph, alertgraph).
type Deps struct {
	Stores voiceops.Stores
	Auth   *auth.Authenticator
	Now    func() time.Time
	Log    *slog.Logger
	// AccessLog writes the access lines: Log when nil. The harness holds
	// them for the metrics' flush, as the functions do
	// (lambdamain.AccessLogger).
	AccessLog         *slog.Logger
	URLPolicy         voiceops.URLPolicy
	Metrics           *buckets.Recorder
	InternalKeyDigest string
	Outbox            Outbox
	Conversations     *conversation.Engine
	DNI               voiceops.DNIStore
	Calls             voiceops.CallStore
	Dial              voiceops.DialQueue
	Guards            httpapi.Guards
	// Telemetry receives the request metrics (the suite writes them as EMF
	// lines and checks every one: logs_test.go).
	Telemetry telemetry.Recorder
	// Series reads the metric series and previews (our additions).
	Series *series.Reader
	// Destinations are the accounts' outbound destination policies (the
	// accounts are of region us).
	Destinations destination.Store
}

// Outbox is the delivery machinery the studio groups use.
type Outbox interface {
	Fanout(ctx context.Context, e voiceops.AlertEvent) error
	studioapi.Outbox
}

func (d Deps) config() httpapi.Config {
	if d.Now == nil {
		d.Now = time.Now
	}
	cfg := httpapi.Config{Keys: d.Auth, Projects: d.Stores.Accounts, InternalKey: httpapi.FixedDigest(d.InternalKeyDigest), Now: d.Now, Log: d.Log, AccessLog: d.AccessLog,
		// Inline, so that a test reads the api_errors a response recorded.
		Background: func(f func()) { f() }, Guards: d.Guards, Metrics: d.Telemetry}
	if d.Metrics != nil {
		cfg.CountError = func(ctx context.Context, accountID, projectID string, at time.Time) error {
			return d.Metrics.Record(ctx, metrics.Count(metrics.APIErrors, accountID, projectID, at))
		}
	}
	return cfg
}

func (d Deps) now() func() time.Time {
	if d.Now == nil {
		return time.Now
	}
	return d.Now
}

func (d Deps) studio() [][]httpapi.Route {
	var fanout alerting.Fanout
	if d.Outbox != nil {
		fanout = d.Outbox.Fanout
	}
	// The alerts function's graph: the evaluator's marks on the reads (a
	// changed rule's wake-up is the stores': the harness's memory store
	// wakes its metrics' listener).
	g := alertgraph.New(alertgraph.Deps{Rules: d.Stores.Rules, Endpoints: d.Stores.Endpoints, Marks: d.Stores.Evaluations,
		Fanout: fanout, Now: d.now(), Log: d.Log})
	svc := g.Service
	var recorder studioapi.Recorder
	if d.Metrics != nil {
		recorder = d.Metrics
	}
	return [][]httpapi.Route{
		(&studioapi.Alerts{Rules: g.Rules, Service: svc, History: d.Stores.History, Endpoints: d.Stores.Endpoints,
			Projects: d.Stores.Accounts, Series: d.Series, Silences: d.Stores.Silences, Now: d.now()}).Routes(),
		(&studioapi.Webhooks{Endpoints: d.Stores.Endpoints, Deliveries: d.Stores.Deliveries, Service: svc, Outbox: d.Outbox, URLPolicy: d.URLPolicy, Events: d.Stores.Events}).Routes(),
		(&studioapi.Intake{Metrics: recorder, Now: d.now()}).Routes(),
		console.Routes(),
	}
}

func (d Deps) conversations() [][]httpapi.Route {
	return [][]httpapi.Route{
		(&conversationsapi.Conversations{Store: d.Stores.Conversations, Now: d.now()}).Routes(),
		(&conversationsapi.Concurrency{Store: d.Stores.Conversations, Now: d.now()}).Routes(),
		(&conversationsapi.Handoff{Store: d.Stores.Conversations}).Routes(),
	}
}

func (d Deps) base() [][]httpapi.Route {
	out := d.conversations()
	if d.Conversations != nil {
		out = append(out,
			(&chatapi.Chat{Engine: d.Conversations}).Routes(),
			(&voiceapi.Voice{Engine: d.Conversations}).Routes(),
			(&eventsapi.Events{Engine: d.Conversations}).Routes())
	}
	return append(out,
		(&voiceapi.DNI{Pools: d.DNI, Now: d.now()}).Routes(),
		(&outboundapi.Outbound{Calls: calls.New(d.Calls, d.now(), calls.WithDial(d.Dial)), ValidNumber: phone.Valid, ValidCountry: phone.ValidCountry,
			Destinations: &destination.Checker{Policies: d.Destinations, Region: voiceops.RegionUS, Classify: phone.Classify}}).Routes())
}

// All serves every route of both hosts, as the dev server does.
func All(d Deps) http.Handler { return httpapi.New(d.config(), append(d.studio(), d.base()...)...) }

// Studio serves the studio host's groups.
func Studio(d Deps) http.Handler { return httpapi.New(d.config(), d.studio()...) }

// Intake serves the metric intake alone (functions/intake).
func Intake(d Deps) http.Handler { return httpapi.New(d.config(), d.studio()[2]) }

// Conversations serves the conversations function's groups.
func Conversations(d Deps) http.Handler { return httpapi.New(d.config(), d.conversations()...) }
