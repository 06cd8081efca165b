package checklinks

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/voiceops/opsapi/"

// rule forbids a set of packages (module-relative paths; "x/..." is x and
// everything under it) to the functions it names. "*" is every function;
// except names the functions the rule does not apply to. Why says what
// the function runs instead, for the failure message.
type rule struct {
	functions []string
	forbid    []string
	except    []string
	why       string
}

// rules are derived from what each function's handler calls (its main.go).
var rules = []rule{
	{functions: []string{"*"}, forbid: []string{"scripts/...", "infra/..."},
		why: "tools and the CDK app are never deployed code"},
	{functions: []string{"*"}, forbid: []string{"shared/store/memory", "shared/testsupport/...", "shared/store/storetest", "shared/testsupport/apitest", "shared/platform/apispec"},
		why: "in-memory stores, test helpers and the OpenAPI document are for tests and the dev server"},
	{functions: []string{"*"}, forbid: []string{"shared/platform/telemetry/prom", "shared/calls/simulator", "shared/ops/provision", "shared/ops/operatorapi", "shared/platform/tablestream"},
		why: "Prometheus exposition, the call simulator, provisioning and the operator API belong to the dev server and tools; Lambda functions emit EMF"},
	{functions: []string{"*"}, except: []string{"alerts"}, forbid: []string{"shared/alerts/console"},
		why: "only the alerts function serves the console"},
	{functions: []string{"*"}, except: []string{"outbound"}, forbid: []string{"shared/calls/phone", "shared/calls/outboundapi"},
		why: "only outbound parses phone numbers (libphonenumber's metadata is megabytes)"},
	{functions: []string{"*"}, except: []string{"calls", "dialer"}, forbid: []string{"shared/calls/telephony/twilio", "shared/calls/twilioapi"},
		why: "only the dialer places calls with Twilio and only calls serves its callbacks"},
	{functions: []string{"*"}, except: []string{"calls", "chat"}, forbid: []string{"shared/conversations/agent/bedrockconverse"},
		why: "only chat and calls answer turns with a model; the SDK's Bedrock Runtime client is about 1 MiB"},
	{functions: []string{"*"}, except: []string{"calls", "chat", "events", "sweeper"}, forbid: []string{"shared/conversations/conversation", "shared/conversations/convgraph", "shared/conversations/agent", "shared/conversations/hooks/..."},
		why: "only the conversation functions run the conversation engine, agents and hooks (conversations only lists and reads: shared/conversations/convlist)"},
	{functions: []string{"*"}, except: []string{"chat"}, forbid: []string{"shared/conversations/chatapi"},
		why: "only chat serves the chat group"},
	{functions: []string{"*"}, except: []string{"calls"}, forbid: []string{"shared/conversations/voiceapi"},
		why: "only calls serves the voice intake and DNI"},
	{functions: []string{"*"}, except: []string{"events"}, forbid: []string{"shared/conversations/eventsapi"},
		why: "only events serves external events and bridge-ended"},
	{functions: []string{"*"}, except: []string{"calls", "chat", "events"}, forbid: []string{"shared/conversations/turnreply"},
		why: "the turn replies are the engine's groups' (it links the engine's types)"},
	{functions: []string{"*"}, except: []string{"conversations"}, forbid: []string{"shared/conversations/conversationsapi"},
		why: "only conversations serves the lists, the concurrency series and the handoff state"},
	{functions: []string{"*"}, except: []string{"evaluator"}, forbid: []string{"shared/alerts/evaluator", "shared/alerts/evalgraph"},
		why: "only the evaluator function evaluates rules; the others wake it through the metric data"},
	{functions: []string{"*"}, except: []string{"alerts", "webhooks"}, forbid: []string{"shared/alerts/alertgraph"},
		why: "only alerts and webhooks change rules and endpoints"},
	{functions: []string{"outbound"}, forbid: []string{"shared/conversations/concurrency", "shared/alerts/webhook", "shared/alerts/delivery", "shared/alerts/alerting", "shared/metrics", "shared/metrics/series", "shared/metrics/buckets"},
		why: "outbound triggers and reads calls: it runs no conversations, webhooks or metric series"},
	{functions: []string{"dialer", "dispatcher", "evaluator", "sweeper"}, forbid: []string{"shared/platform/httpapi", "shared/platform/auth"},
		why: "queue and schedule consumers serve no HTTP"},
	{functions: []string{"misdirected"}, forbid: []string{"shared/..."},
		why: "it answers every request 421 and stays the size of a hello world"},
}

// listing is the module's packages and each function's dependencies, as
// the bundles are built (scripts/build.sh: linux/arm64, lambda.norpc).
type listing struct {
	packages map[string]bool     // module-relative paths
	deps     map[string][]string // function name → module-relative deps
}

func list(t *testing.T) listing {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", module+"...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	l := listing{packages: map[string]bool{}, deps: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(f[0], module)
		l.packages[pkg] = true
		name, ok := strings.CutPrefix(pkg, "functions/")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		var own []string
		for _, d := range f[1:] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				own = append(own, rel)
			}
		}
		l.deps[name] = own
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return l
}

// matches says whether pkg is pattern, or under it for "x/...".
func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == dir || strings.HasPrefix(pkg, dir+"/")
	}
	return pkg == pattern
}

func (r rule) appliesTo(fn string) bool {
	return (slices.Contains(r.functions, "*") || slices.Contains(r.functions, fn)) && !slices.Contains(r.except, fn)
}

// violations lists "function links package (why)" for every broken rule.
func violations(l listing) []string {
	var out []string
	for fn, deps := range l.deps {
		for _, r := range rules {
			if !r.appliesTo(fn) {
				continue
			}
			for _, d := range deps {
				for _, p := range r.forbid {
					if matches(p, d) {
						out = append(out, "functions/"+fn+" links "+d+" ("+r.why+")")
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestFunctionsLinkOnlyWhatTheyRun(t *testing.T) {
	l := list(t)
	// Every directory of functions/ is checked: go list must have seen it.
	dirs, err := os.ReadDir("../../functions")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, ok := l.deps[d.Name()]; d.IsDir() && !ok {
			t.Errorf("go list did not list functions/%s", d.Name())
		}
	}
	if len(l.deps) < 10 || len(l.deps["outbound"]) == 0 {
		t.Fatalf("go list found %d functions (%v): want every functions/<name>", len(l.deps), l.deps)
	}
	for _, v := range violations(l) {
		t.Error(v)
	}
}

// TestRulesNameRealThings keeps the rules from going stale: a renamed
// function or package would otherwise make its rule forbid nothing.
func TestRulesNameRealThings(t *testing.T) {
	l := list(t)
	for _, r := range rules {
		for _, fn := range append(slices.Clone(r.functions), r.except...) {
			if _, ok := l.deps[fn]; fn != "*" && !ok {
				t.Errorf("rule %q names functions/%s, which is not a function", r.why, fn)
			}
		}
		for _, p := range r.forbid {
			found := false
			for pkg := range l.packages {
				found = found || matches(p, pkg)
			}
			if !found {
				t.Errorf("rule %q forbids %s, which is no package of the module", r.why, p)
			}
		}
	}
}

// TestRulesCatchALink checks the checker on a made-up listing: outbound
// linking the conversation engine through a base-host group package (as it
// did through the former shared/baseapi), conversations linking it (as it
// did through shared/conversations/conversation's Lister), and chat another function's group.
func TestRulesCatchALink(t *testing.T) {
	l := listing{deps: map[string][]string{
		"outbound": {"shared/conversations/chatapi", "shared/conversations/conversation", "shared/calls/phone"},
		"calls":    {"shared/conversations/voiceapi", "shared/conversations/conversation", "shared/calls/telephony/twilio"},
		"chat":     {"shared/conversations/chatapi", "shared/conversations/eventsapi", "shared/conversations/conversation"},
		"dialer":   {"shared/calls/telephony/twilio", "shared/conversations/hooks/lambdainvoke"},
		// The lists through a group package that also runs the engine.
		"conversations": {"shared/conversations/conversationsapi", "shared/conversations/convlist", "shared/conversations/voiceapi", "shared/conversations/conversation", "shared/conversations/agent"},
	}}
	got := violations(l)
	want := []string{
		"functions/chat links shared/conversations/eventsapi",
		"functions/conversations links shared/conversations/agent",
		"functions/conversations links shared/conversations/conversation",
		"functions/conversations links shared/conversations/voiceapi",
		"functions/dialer links shared/conversations/hooks/lambdainvoke",
		"functions/outbound links shared/conversations/chatapi",
		"functions/outbound links shared/conversations/conversation",
	}
	var short []string
	for _, v := range got {
		short = append(short, v[:strings.Index(v, " (")])
	}
	if !slices.Equal(short, want) {
		t.Errorf("violations = %q, want %q", short, want)
	}
}
