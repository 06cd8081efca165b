// Package catalog is the one list of the HTTP API: each function that
// serves routes, the host it serves, its route groups and every group's
// method+path routes. It is plain data (no group's code), so that infra and
// any function may import it without linking the groups:
//
//   - infra derives each function's API Gateway routes from it;
//   - tests hold every consumer to it: each group's Routes() (catalog_test),
//     each function's handler (functions/<name>/catalog_test.go), the dev
//     server (scripts/dev), the HTTP test suite (shared/testsupport/apitest) and the
//     OpenAPI document, per host (shared/platform/apispec).
//
// A new route is one entry here, next to its group's Routes() and its
// operation in shared/platform/apispec/openapi.json (docs/architecture.md, "Where to add a route").
package catalog

import "strings"

// Host is one of the two public hosts of a regional stack.
type Host string

const (
	// Studio serves the studio host ({agent_studio_url}): alerts, webhooks, the
	// internal metric intake, and our additions (series, console).
	Studio Host = "studio"
	// Base serves the base host ({base_url}): conversations, chat, calls, events.
	Base Host = "base"
)

// Hosts lists every host; each regional stack has one HTTP API per host.
var Hosts = []Host{Studio, Base}

// Route is one route of a group: a Go ServeMux pattern's method and path
// ("{name}" one segment, a final "{name...}" the rest).
type Route struct {
	Method string
	Path   string
}

// Pattern is the route's ServeMux pattern, "METHOD /path" (the Route
// dimension of the request metrics).
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// SamplePath is the route's path with every parameter given a value
// ("x"): a request the route matches, for the tests that probe a handler.
func (r Route) SamplePath() string {
	segs := strings.Split(r.Path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "x"
		}
	}
	return strings.Join(segs, "/")
}

// Group is a route group of the code: a type's Routes() method, or a
// package's Routes function.
type Group struct {
	// Name names the code: "studioapi.Alerts" for (*studioapi.Alerts).Routes,
	// "console.Routes" for a package function; apidocs.Routes takes the host
	// ("apidocs.Routes(Studio)").
	Name string
	Host Host
	// Undocumented groups are not operations of the OpenAPI document: the
	// console's files and the document itself.
	Undocumented bool
	Routes       []Route
}

// Function is a Lambda function that serves routes: functions/<Name>.
type Function struct {
	Name   string
	Groups []Group
}

// Routes lists the routes of every group of the function.
func (f Function) Routes() []Route {
	var out []Route
	for _, g := range f.Groups {
		out = append(out, g.Routes...)
	}
	return out
}

// The groups, by host.
var (
	Alerts = Group{Name: "studioapi.Alerts", Host: Studio, Routes: []Route{
		{"POST", "/v1/alert-rules"},
		{"GET", "/v1/alert-rules"},
		{"GET", "/v1/alert-rules/{rule_id}"},
		{"PATCH", "/v1/alert-rules/{rule_id}"},
		{"DELETE", "/v1/alert-rules/{rule_id}"},
		{"GET", "/v1/alerts"},
		{"GET", "/v1/alert-rules/{rule_id}/history"},
		{"POST", "/v1/alert-rules/preview"},
		{"GET", "/v1/metrics"},
		{"POST", "/v1/silences"},
		{"GET", "/v1/silences"},
		{"DELETE", "/v1/silences/{silence_id}"},
		{"GET", "/v1/account"},
	}}
	Webhooks = Group{Name: "studioapi.Webhooks", Host: Studio, Routes: []Route{
		{"POST", "/v1/webhook-endpoints"},
		{"GET", "/v1/webhook-endpoints"},
		{"GET", "/v1/webhook-endpoints/{endpoint_id}"},
		{"PATCH", "/v1/webhook-endpoints/{endpoint_id}"},
		{"DELETE", "/v1/webhook-endpoints/{endpoint_id}"},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/rotate-secret"},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/test"},
		{"GET", "/v1/webhook-endpoints/{endpoint_id}/deliveries"},
		{"POST", "/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry"},
		{"GET", "/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/payload"},
	}}
	Intake = Group{Name: "studioapi.Intake", Host: Studio, Routes: []Route{
		{"POST", "/internal/v1/metric-events"},
	}}
	Console = Group{Name: "console.Routes", Host: Studio, Undocumented: true, Routes: []Route{
		{"GET", "/console"},
		{"GET", "/console/{file...}"},
	}}
	StudioDocs = Group{Name: "apidocs.Routes(Studio)", Host: Studio, Undocumented: true, Routes: []Route{
		{"GET", "/openapi.json"},
		{"GET", "/docs"},
	}}

	Chat = Group{Name: "chatapi.Chat", Host: Base, Routes: []Route{
		{"POST", "/{version}/{account_id}/{project_id}/chat/create"},
		{"POST", "/{version}/{account_id}/{project_id}/chat/respond"},
		{"PUT", "/{version}/{account_id}/{project_id}/chat/close"},
	}}
	Voice = Group{Name: "voiceapi.Voice", Host: Base, Routes: []Route{
		{"POST", "/internal/v1/voice/calls"},
		{"POST", "/internal/v1/voice/calls/{conversation_id}/turns"},
		{"POST", "/internal/v1/voice/calls/{conversation_id}/end"},
	}}
	DNI = Group{Name: "voiceapi.DNI", Host: Base, Routes: []Route{
		{"POST", "/v1/conversations/dni-reservation"},
	}}
	Events = Group{Name: "eventsapi.Events", Host: Base, Routes: []Route{
		{"POST", "/v1/external-events/webhook"},
		{"POST", "/internal/v1/agentic-dial/bridge-ended"},
	}}
	Conversations = Group{Name: "conversationsapi.Conversations", Host: Base, Routes: []Route{
		{"GET", "/v3/{account_id}/{project_id}/conversations"},
		{"GET", "/v1/{account_id}/{project_id}/conversations"},
	}}
	Concurrency = Group{Name: "conversationsapi.Concurrency", Host: Base, Routes: []Route{
		{"GET", "/v1/{account_id}/{project_id}/conversations/concurrency"},
	}}
	Handoff = Group{Name: "conversationsapi.Handoff", Host: Base, Routes: []Route{
		{"GET", "/v1/{account_id}/{project_id}/handoff_state"},
	}}
	Outbound = Group{Name: "outboundapi.Outbound", Host: Base, Routes: []Route{
		{"POST", "/v1/outbound-calling/trigger"},
		{"GET", "/v1/outbound-calling/{callSid}/status"},
		{"POST", "/internal/v1/outbound-calling/{callSid}/status"},
	}}
	TwilioCallbacks = Group{Name: "twilioapi.Callbacks", Host: Base, Routes: []Route{
		{"POST", "/v1/telephony/twilio/{callSid}/status"},
		{"POST", "/v1/telephony/twilio/{callSid}/answer"},
		{"POST", "/v1/telephony/twilio/{callSid}/turns/{conversation_id}"},
	}}
	BaseDocs = Group{Name: "apidocs.Routes(Base)", Host: Base, Undocumented: true, Routes: []Route{
		{"GET", "/openapi.json"},
		{"GET", "/docs"},
	}}
)

// Functions lists every function that serves routes, with the groups its
// main.go mounts.
var Functions = []Function{
	{Name: "alerts", Groups: []Group{Alerts, Console, StudioDocs}},
	{Name: "webhooks", Groups: []Group{Webhooks}},
	{Name: "intake", Groups: []Group{Intake}},
	{Name: "chat", Groups: []Group{Chat}},
	{Name: "conversations", Groups: []Group{Conversations, Concurrency, Handoff, BaseDocs}},
	{Name: "calls", Groups: []Group{Voice, DNI, TwilioCallbacks}},
	{Name: "outbound", Groups: []Group{Outbound}},
	{Name: "events", Groups: []Group{Events}},
}

// Lookup returns the function named name.
func Lookup(name string) (Function, bool) {
	for _, f := range Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

// Groups lists every group of every function.
func Groups() []Group {
	var out []Group
	for _, f := range Functions {
		out = append(out, f.Groups...)
	}
	return out
}

// OnHost lists the routes of every group served on host h.
func OnHost(h Host) []Route {
	var out []Route
	for _, g := range Groups() {
		if g.Host == h {
			out = append(out, g.Routes...)
		}
	}
	return out
}
