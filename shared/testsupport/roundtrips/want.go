package roundtrips

import (
	"fmt"
	"strings"

	"github.com/voiceops/opsapi/shared/platform/catalog"
)

// Row is a route's AWS calls on a warm function: Path is the steps the
// request waits for in turn (Path's notation), the calls of a step running
// in parallel.
type Row struct {
	Path string
}

// Want is every route's row, by host and route pattern ("studio GET
// /v1/alerts"). Each function's round-trip test measures its routes and
// holds them to it; docs/performance.md shows it and a test holds the page
// to it. A route with no row fails the catalog test.
var Want = map[string]Row{
	"base GET /docs":                                                                  {"—"},
	"base GET /openapi.json":                                                          {"—"},
	"base GET /v1/outbound-calling/{callSid}/status":                                  {"UpdateItem requests → GetItem calls"},
	"base GET /v1/{account_id}/{project_id}/conversations":                            {"UpdateItem requests → Query conversations → Query conversations → BatchGetItem conversations"},
	"base GET /v1/{account_id}/{project_id}/conversations/concurrency":                {"UpdateItem requests → Query conversations → Query conversations"},
	"base GET /v1/{account_id}/{project_id}/handoff_state":                            {"UpdateItem requests → GetItem conversations"},
	"base GET /v3/{account_id}/{project_id}/conversations":                            {"UpdateItem requests → Query conversations → Query conversations → BatchGetItem conversations"},
	"base POST /internal/v1/agentic-dial/bridge-ended":                                {"UpdateItem requests → GetItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /internal/v1/outbound-calling/{callSid}/status":                        {"UpdateItem calls"},
	"base POST /internal/v1/voice/calls":                                              {"UpdateItem config → TransactWriteItems conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /internal/v1/voice/calls/{conversation_id}/end":                        {"GetItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /internal/v1/voice/calls/{conversation_id}/turns":                      {"GetItem conversations → PutItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /v1/conversations/dni-reservation":                                     {"UpdateItem requests → Query config → UpdateItem config"},
	"base POST /v1/external-events/webhook":                                           {"UpdateItem requests → GetItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /v1/outbound-calling/trigger":                                          {"UpdateItem requests → PutItem calls ‖ SendMessage outbound"},
	"base POST /v1/telephony/twilio/{callSid}/answer":                                 {"GetItem calls → UpdateItem calls → Invoke calls → UpdateItem calls → UpdateItem config → TransactWriteItems conversations → UpdateItem metrics ‖ UpdateItem metrics → UpdateItem calls → GetItem calls"},
	"base POST /v1/telephony/twilio/{callSid}/status":                                 {"GetItem calls → UpdateItem calls"},
	"base POST /v1/telephony/twilio/{callSid}/turns/{conversation_id}":                {"GetItem calls → UpdateItem calls → Invoke calls → UpdateItem calls → GetItem conversations → PutItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics → UpdateItem calls → GetItem calls"},
	"base POST /{version}/{account_id}/{project_id}/chat/create":                      {"UpdateItem requests → TransactWriteItems conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base POST /{version}/{account_id}/{project_id}/chat/respond":                     {"UpdateItem requests → GetItem conversations → PutItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"base PUT /{version}/{account_id}/{project_id}/chat/close":                        {"UpdateItem requests → GetItem conversations → PutItem conversations → UpdateItem metrics ‖ UpdateItem metrics"},
	"studio DELETE /v1/alert-rules/{rule_id}":                                         {"UpdateItem requests → GetItem config → TransactWriteItems config"},
	"studio DELETE /v1/silences/{silence_id}":                                         {"UpdateItem requests → Query config ‖ Query config → TransactWriteItems config,metrics"},
	"studio DELETE /v1/webhook-endpoints/{endpoint_id}":                               {"UpdateItem requests → GetItem config → TransactWriteItems config"},
	"studio GET /console":                                                             {"—"},
	"studio GET /console/{file...}":                                                   {"—"},
	"studio GET /docs":                                                                {"—"},
	"studio GET /openapi.json":                                                        {"—"},
	"studio GET /v1/alert-rules":                                                      {"UpdateItem requests → Query config ‖ Query config"},
	"studio GET /v1/alert-rules/{rule_id}":                                            {"UpdateItem requests → GetItem config ‖ Query config"},
	"studio GET /v1/alert-rules/{rule_id}/history":                                    {"UpdateItem requests → GetItem config ‖ Query config ‖ Query deliveries"},
	"studio GET /v1/alerts":                                                           {"UpdateItem requests → Query config ‖ Query config"},
	"studio GET /v1/metrics":                                                          {"UpdateItem requests → GetItem config → Query metrics ‖ Query metrics"},
	"studio GET /v1/account":                                                          {"UpdateItem requests → Query config"},
	"studio GET /v1/silences":                                                         {"UpdateItem requests → Query config"},
	"studio GET /v1/webhook-endpoints":                                                {"UpdateItem requests → Query config"},
	"studio GET /v1/webhook-endpoints/{endpoint_id}":                                  {"UpdateItem requests → GetItem config"},
	"studio GET /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/payload": {"UpdateItem requests → GetItem config ‖ GetItem deliveries → GetItem deliveries"},
	"studio GET /v1/webhook-endpoints/{endpoint_id}/deliveries":                       {"UpdateItem requests → GetItem config ‖ Query deliveries"},
	"studio PATCH /v1/alert-rules/{rule_id}":                                          {"UpdateItem requests → GetItem config → TransactWriteItems config,metrics"},
	"studio PATCH /v1/webhook-endpoints/{endpoint_id}":                                {"UpdateItem requests → GetItem config → PutItem config"},
	"studio POST /internal/v1/metric-events":                                          {"UpdateItem metrics ‖ UpdateItem metrics"},
	"studio POST /v1/alert-rules":                                                     {"UpdateItem requests → TransactWriteItems config,metrics"},
	"studio POST /v1/alert-rules/preview":                                             {"UpdateItem requests → GetItem config → Query metrics ‖ Query metrics"},
	"studio POST /v1/silences":                                                        {"UpdateItem requests → GetItem config ‖ GetItem config → Query config → TransactWriteItems config"},
	"studio POST /v1/webhook-endpoints":                                               {"UpdateItem requests → TransactWriteItems config"},
	"studio POST /v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/retry":  {"UpdateItem requests → GetItem config ‖ GetItem deliveries → PutItem deliveries → SendMessage deliveries"},
	"studio POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret":                   {"UpdateItem requests → GetItem config → PutItem config"},
	"studio POST /v1/webhook-endpoints/{endpoint_id}/test":                            {"UpdateItem requests → GetItem config → TransactWriteItems deliveries → SendMessage deliveries → UpdateItem deliveries"},
}

// Sequential is the route's sequential round trips: the steps it waits
// for in turn.
func (r Row) Sequential() int { return count(r.Path) }

// count is the sequential round trips of a path: its steps.
func count(path string) int {
	if path == "—" || path == "" {
		return 0
	}
	return strings.Count(path, " → ") + 1
}

// calls is the number of calls of a path.
func calls(path string) int {
	if path == "—" || path == "" {
		return 0
	}
	return strings.Count(path, " → ") + strings.Count(path, " ‖ ") + 1
}

// Table is the markdown table of Want that docs/performance.md shows: by
// function in the catalog's order, then by route.
func Table() string {
	var b strings.Builder
	b.WriteString("| Function | Route | Sequential | Calls | AWS calls in order (→ waits, ‖ in parallel) |\n")
	b.WriteString("|---|---|--:|--:|---|\n")
	for _, fn := range catalog.Functions {
		for _, r := range fn.Routes() {
			row := Want[string(fn.Groups[0].Host)+" "+r.Pattern()]
			fmt.Fprintf(&b, "| %s | `%s` | %d | %d | %s |\n", fn.Name, r.Pattern(), count(row.Path), calls(row.Path), row.Path)
		}
	}
	return b.String()
}
