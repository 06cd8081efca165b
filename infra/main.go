// Command infra is the CDK app of VoiceOps: one stack per region (us, uk,
// eu), each with both hosts' HTTP APIs, every function of Functions, the
// tables of shared/platform/tables, the delivery queue and its DLQ, the schedules,
// alarms and the internal key. cdk.json runs it with `go run ./infra`.
//
// Context keys (cdk.json or -c key=value):
//
//	region              us | uk | eu | global | all (default all: the three
//	                    regional stacks and VoiceOps-global)
//	account             AWS account ID (default CDK_DEFAULT_ACCOUNT; when
//	                    neither is set the stacks are account-agnostic, so
//	                    synth never needs credentials)
//	deletionProtection  true (default) | false: table deletion protection,
//	                    retain-on-delete and stack termination protection
//	apiRateLimit        steady requests per second of each API stage (5000):
//	                    the region's safety ceiling, not a tenant's limit
//	                    (those are per API key: docs/api.md, "Rate limits and retries")
//	apiBurstLimit       burst of each API stage (5000)
//	studioDomain        custom domain of the studio host; "{region}" is
//	                    replaced by us/uk/eu, e.g. studio.{region}.example.com
//	baseDomain          custom domain of the base host, same form
//	certificateArn      ACM certificate (in the stack's region) for the
//	                    custom domains
//	alarmTopicArn       an existing SNS topic every alarm notifies (on ALARM
//	                    and OK); without it each regional stack makes its own
//	                    topic, voiceops-<region>-alarms
//	alarmEmail          an address subscribed to the stack's own alarm topic
//	accountConcurrency  the account's Lambda concurrency quota in each region
//	                    (1000): the functions' reservations must leave AWS's
//	                    unreserved minimum (100) of it (docs/capacity.md)
//	reservedConcurrency.<function>
//	                    a function's reserved concurrency (its Reserved in
//	                    functions.go; misdirected: the global stack's)
//	logRetentionDays    days kept of every function's logs and of the API
//	                    access logs (30); one of CloudWatch Logs' values
//	tracing             true (default) | false: X-Ray active tracing of
//	                    the functions (their AWS calls and webhook POSTs)
//	globalRegion        region of VoiceOps-global (default us-east-1)
//	globalDomain        custom domain of the unprefixed address
//	globalCertificateArn ACM certificate for globalDomain
//
// Every key but region and account may be given per region by suffixing it
// with ".<region>", e.g. -c certificateArn.uk=arn:aws:acm:eu-west-2:...
//
// Synthesizing builds the functions (bundle.go): it needs Go, and no step
// before it.
package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// Region is a product region and the AWS region that serves it.
type Region struct {
	Name      string // us, uk, eu: SERVICE_REGION and the stack name suffix
	AWSRegion string
}

// Regions lists every product region (docs/api.md, "The two hosts").
var Regions = []Region{
	{Name: "us", AWSRegion: "us-east-1"},
	{Name: "uk", AWSRegion: "eu-west-2"},
	{Name: "eu", AWSRegion: "eu-west-1"},
}

// Throttle is an API stage's throttling limits.
type Throttle struct {
	RateLimit  float64 // steady requests per second
	BurstLimit float64
}

// StackConfig is everything a regional stack is built from.
type StackConfig struct {
	Region             Region
	Account            string   // "" leaves the stack account-agnostic
	Bundler            *Bundler // builds the functions' code
	DeletionProtection bool
	Throttle           Throttle
	Domains            map[Host]string // custom domains; empty for none
	CertificateArn     string
	AlarmTopicArn      string
	AlarmEmail         string
	Obs                Observability // log retention and tracing (observability.go)
	// AccountConcurrency is the account's Lambda concurrency quota in the
	// region; Reserved overrides functions' Reserved, by name.
	AccountConcurrency int
	Reserved           map[string]int
	// OtherReserved is what another stack reserves in the same AWS region
	// (VoiceOps-global's function, beside VoiceOps-us).
	OtherReserved int
	// Bedrock is what Bedrock agents may call (context bedrockModels,
	// bedrockGuardrails).
	Bedrock Bedrock
}

// reserved is a function's reserved concurrency in this stack (0: none).
func (c StackConfig) reserved(f Function) int {
	if n, ok := c.Reserved[f.Name]; ok {
		return n
	}
	return f.Reserved
}

// prefix is the physical name prefix of the stack's resources.
func (c StackConfig) prefix() string { return "voiceops-" + c.Region.Name }

// stackName is the CloudFormation stack name, e.g. VoiceOps-us.
func (c StackConfig) stackName() string { return "VoiceOps-" + c.Region.Name }

// removalPolicy keeps stateful resources when the stack is deleted, unless
// deletion protection is off (test and LocalStack deployments).
func (c StackConfig) removalPolicy() awscdk.RemovalPolicy { return removalPolicy(c.DeletionProtection) }

// removalPolicy is RETAIN with deletion protection on: tables, queues
// (their messages are deliveries and dials not yet made) and log groups.
func removalPolicy(protect bool) awscdk.RemovalPolicy {
	if protect {
		return awscdk.RemovalPolicy_RETAIN
	}
	return awscdk.RemovalPolicy_DESTROY
}

// AppConfig is the set of stacks to synthesize.
type AppConfig struct {
	Stacks []StackConfig
	Global *GlobalConfig // nil: no VoiceOps-global stack
}

func main() {
	os.Exit(run())
}

func run() int {
	defer jsii.Close()
	root, err := moduleRoot(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		return 1
	}
	app := awscdk.NewApp(nil)
	if _, err := build(app, Functions, os.Getenv, NewBundler(root, GoBuilder(root))); err != nil {
		fmt.Fprintln(os.Stderr, "infra:", err)
		return 1
	}
	app.Synth(nil)
	return 0
}

// build adds the stacks chosen by the app's context to app and returns them;
// b builds the functions' code.
func build(app awscdk.App, fns []Function, getenv func(string) string, b *Bundler) ([]awscdk.Stack, error) {
	cfg, err := configFromContext(app.Node(), getenv)
	if err != nil {
		return nil, err
	}
	var stacks []awscdk.Stack
	for _, sc := range cfg.Stacks {
		sc.Bundler = b
		s, err := NewRegionalStack(app, sc, fns)
		if err != nil {
			return nil, err
		}
		stacks = append(stacks, s)
	}
	if cfg.Global != nil {
		cfg.Global.Bundler = b
		s, err := NewGlobalStack(app, *cfg.Global)
		if err != nil {
			return nil, err
		}
		stacks = append(stacks, s)
	}
	return stacks, nil
}

// NewRegionalStack builds the stack of one region from a function list.
func NewRegionalStack(scope constructs.Construct, cfg StackConfig, fns []Function) (awscdk.Stack, error) {
	if err := validateFunctions(fns); err != nil {
		return nil, err
	}
	for _, f := range fns {
		if err := cfg.Bundler.check(f.Name); err != nil {
			return nil, err
		}
	}
	if (cfg.Domains[StudioHost] != "" || cfg.Domains[BaseHost] != "") && cfg.CertificateArn == "" {
		return nil, fmt.Errorf("region %s: custom domains need context certificateArn (an ACM certificate in %s)", cfg.Region.Name, cfg.Region.AWSRegion)
	}
	for _, h := range Hosts {
		if cfg.Domains[h] != "" && !slices.Contains(servedHosts(fns), h) {
			return nil, fmt.Errorf("region %s: context %sDomain is set, but no function serves the %s host yet", cfg.Region.Name, h, h)
		}
	}

	stack := awscdk.NewStack(scope, jsii.String(cfg.stackName()), &awscdk.StackProps{
		Env:                   env(cfg.Account, cfg.Region.AWSRegion),
		Description:           jsii.String(fmt.Sprintf("VoiceOps API, region %s (%s)", cfg.Region.Name, cfg.Region.AWSRegion)),
		TerminationProtection: jsii.Bool(cfg.DeletionProtection),
	})
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("voiceops"), nil)
	awscdk.Tags_Of(stack).Add(jsii.String("voiceops-region"), jsii.String(cfg.Region.Name), nil)

	if err := checkReservations(cfg, fns, cfg.OtherReserved); err != nil {
		return nil, err
	}
	d := deps{
		tables:      newTables(stack, cfg),
		queue:       newDeliveryQueue(stack, cfg),
		internalKey: newInternalKey(stack, cfg),
		twilio:      newTwilioSecret(stack, cfg),
	}
	newOutboundQueue(stack, cfg, &d.queue)
	lambdas, err := newFunctions(stack, cfg, fns, d)
	if err != nil {
		return nil, err
	}
	apis := newAPIs(stack, cfg, fns, lambdas)
	baseURLEnv(lambdamain.PublicBaseURLEnv, cfg, fns, lambdas, apis)
	baseURLEnv(lambdamain.ConsoleBaseURLEnv, cfg, fns, lambdas, apis)
	consoleURLEnv(cfg, fns, lambdas, apis)
	addSchedules(stack, fns, lambdas)
	addQueueConsumers(fns, lambdas, d.queue)
	ev := addEvaluatorSources(stack, cfg, fns, lambdas, d.tables)
	a := newAlarmMaker(stack, cfg)
	newAlarms(a, fns, lambdas, d.queue, ev)
	addObservability(stack, cfg, a, fns, lambdas, apis, d.tables, d.queue, ev)
	return stack, nil
}

func env(account, region string) *awscdk.Environment {
	e := &awscdk.Environment{Region: jsii.String(region)}
	if account != "" {
		e.Account = jsii.String(account)
	}
	return e
}

// Defaults of the context keys.
const (
	// The stage ceiling of each host's API: the two hosts together stay
	// within API Gateway's default account quota of a region (10,000
	// requests a second, bursts of 5,000), 200 tenants' keys at their
	// default 25 a second. Tenants meet their own key's limit first.
	defaultRateLimit    = 5000
	defaultBurstLimit   = 5000
	defaultGlobalRegion = "us-east-1"
)

// configFromContext reads the context keys documented at the top of this
// file.
func configFromContext(node constructs.Node, getenv func(string) string) (AppConfig, error) {
	c := contextReader{node: node}
	account := c.str("account", "")
	if account == "" {
		account = getenv("CDK_DEFAULT_ACCOUNT")
	}
	which := strings.ToLower(c.str("region", "all"))

	var cfg AppConfig
	for _, r := range Regions {
		if which != "all" && which != r.Name {
			continue
		}
		sc := StackConfig{
			Region:             r,
			Account:            account,
			DeletionProtection: true,
			Domains: map[Host]string{
				StudioHost: strings.ReplaceAll(c.regional("studioDomain", r.Name, ""), "{region}", r.Name),
				BaseHost:   strings.ReplaceAll(c.regional("baseDomain", r.Name, ""), "{region}", r.Name),
			},
			CertificateArn: c.regional("certificateArn", r.Name, ""),
			AlarmTopicArn:  c.regional("alarmTopicArn", r.Name, ""),
			AlarmEmail:     c.regional("alarmEmail", r.Name, ""),
		}
		var err error
		if sc.AccountConcurrency, sc.Reserved, err = concurrencyFromContext(c, r.Name); err != nil {
			return cfg, err
		}
		if sc.DeletionProtection, err = parseBool(c.regional("deletionProtection", r.Name, "true")); err != nil {
			return cfg, fmt.Errorf("context deletionProtection: %w", err)
		}
		if sc.Throttle.RateLimit, err = parsePositive(c.regional("apiRateLimit", r.Name, strconv.Itoa(defaultRateLimit))); err != nil {
			return cfg, fmt.Errorf("context apiRateLimit: %w", err)
		}
		if sc.Throttle.BurstLimit, err = parsePositive(c.regional("apiBurstLimit", r.Name, strconv.Itoa(defaultBurstLimit))); err != nil {
			return cfg, fmt.Errorf("context apiBurstLimit: %w", err)
		}
		if sc.Obs, err = observabilityFromContext(c, r.Name); err != nil {
			return cfg, err
		}
		if sc.Bedrock, err = bedrockFromContext(c, r.Name); err != nil {
			return cfg, err
		}
		cfg.Stacks = append(cfg.Stacks, sc)
	}
	if which == "all" || which == "global" {
		g := GlobalConfig{
			Account:        account,
			AWSRegion:      c.str("globalRegion", defaultGlobalRegion),
			Domain:         c.str("globalDomain", ""),
			CertificateArn: c.str("globalCertificateArn", ""),
		}
		if g.Domain != "" && g.CertificateArn == "" {
			return cfg, fmt.Errorf("context globalDomain needs globalCertificateArn")
		}
		var err error
		if g.Throttle.RateLimit, err = parsePositive(c.str("apiRateLimit", strconv.Itoa(defaultRateLimit))); err != nil {
			return cfg, fmt.Errorf("context apiRateLimit: %w", err)
		}
		if g.Throttle.BurstLimit, err = parsePositive(c.str("apiBurstLimit", strconv.Itoa(defaultBurstLimit))); err != nil {
			return cfg, fmt.Errorf("context apiBurstLimit: %w", err)
		}
		if g.DeletionProtection, err = parseBool(c.str("deletionProtection", "true")); err != nil {
			return cfg, fmt.Errorf("context deletionProtection: %w", err)
		}
		if g.Reserved, err = parseCount(c.str("reservedConcurrency."+MisdirectedFunction, strconv.Itoa(misdirectedReserved))); err != nil {
			return cfg, fmt.Errorf("context reservedConcurrency.%s: %w", MisdirectedFunction, err)
		}
		g.Message = globalMessage(c)
		if g.Obs, err = observabilityFromContext(c, ""); err != nil {
			return cfg, err
		}
		cfg.Global = &g
	}
	if cfg.Global != nil {
		for i := range cfg.Stacks {
			if cfg.Stacks[i].Region.AWSRegion == cfg.Global.AWSRegion {
				cfg.Stacks[i].OtherReserved = cfg.Global.Reserved
			}
		}
	}
	if len(cfg.Stacks) == 0 && cfg.Global == nil {
		names := []string{}
		for _, r := range Regions {
			names = append(names, r.Name)
		}
		return cfg, fmt.Errorf("context region=%q: want one of %s, global or all", which, strings.Join(names, ", "))
	}
	return cfg, nil
}

// contextReader reads context values, which are strings when given with -c
// and JSON values when set in cdk.json.
type contextReader struct{ node constructs.Node }

func (c contextReader) str(key, def string) string {
	v := c.node.TryGetContext(jsii.String(key))
	switch v := v.(type) {
	case nil:
		return def
	case string:
		if v == "" {
			return def
		}
		return v
	case *string:
		if v == nil || *v == "" {
			return def
		}
		return *v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// regional reads key.<region>, then key, then the default.
func (c contextReader) regional(key, region, def string) string {
	return c.str(key+"."+region, c.str(key, def))
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}

func parsePositive(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a positive number", s)
	}
	return f, nil
}
