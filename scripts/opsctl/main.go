// Command opsctl is the operator's tool: it creates accounts and projects,
// creates, lists and revokes keys, and loads the projects' agent
// configurations, directly in a region's DynamoDB config table; it sets an
// account's outbound rate (calls table) and Twilio account (the region's
// Twilio secret). With -credentials it works on a local dev server instead,
// through the dev server's operator endpoint (shared/ops/operatorapi): the same
// commands over the same store interfaces. Run
// `go run ./scripts/opsctl help` for usage.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/calls/destination"
	"github.com/voiceops/opsapi/shared/calls/telephony/twilio"
	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/ops/operatorapi"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/ratelimit"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

const usage = `opsctl: provision accounts, projects and keys of one region.

Usage:
  opsctl [global flags] <command> [flags]

Commands:
  account create -name NAME [-id ID]        create an account (prints its ID)
  account list                               list accounts
  project create -account ID -name NAME [-id ID]
                                             create a project of an account
  project list -account ID                   list an account's projects
  key create -kind KIND -account ID [-project ID] [-env ENV]
                                             create a key and print it ONCE;
                                             KIND is api (x-api-key), agent
                                             (X-TOKEN), service
                                             (X-Service-Auth-Token) or events
                                             (X-Api-Key of external events).
                                             An api key without -project is
                                             account-scoped (needed by the
                                             alerts and webhooks endpoints);
                                             the other kinds need -project.
                                             An agent token is bound to one
                                             environment of its project (-env
                                             sandbox, pre-release or live;
                                             default live): chat conversations
                                             it starts are in that environment.
  key list -account ID [-prefix PREFIX]      list keys: ID, kind, scope, shown
                                             prefix, created, revoked (a key is
                                             never shown in full again)
  key revoke -account ID -key KEY_ID|PREFIX  revoke a key (takes effect within
                                             5 seconds on warm functions)
  agent load -account ID -project ID -file FILE
                                             check an agent configuration (JSON,
                                             format and example in
                                             shared/conversations/agent/testdata/demo.json)
                                             and store it as the project's,
                                             replacing the previous one; prints
                                             its variants and functions. A bad
                                             file is refused with the JSON path
                                             of every problem; nothing is stored.
  dni add -account ID -project ID -numbers +E164,+E164 [-hold 10m]
                                             add numbers to the project's DNI
                                             pool (POST /v1/conversations/
                                             dni-reservation reserves them), or
                                             change the hold of numbers already
                                             in it; -hold is how long a
                                             reservation lasts (default 10m, at
                                             most 24h). Reservations in
                                             progress are kept.
  outbound rate -account ID -per-second N    set the account's outbound rate: new
                                             calls per second the dialer places
                                             (0 < N <= 100; 0 restores the
                                             default, 1 a second). Shared by
                                             every dialer; takes effect at the
                                             next call.
  twilio set -account ID -sid AC... -from +E164
                                             store the account's Twilio account
                                             SID, auth token and caller ID (the
                                             calls' from_number) in the region's
                                             Twilio secret; the auth token is
                                             read from $TWILIO_AUTH_TOKEN, never
                                             a flag, and never printed
  twilio show -account ID                    print the account's Twilio account
                                             SID and caller ID (token hidden)
  limit set -account ID -rate N -burst N     set the rate limit of every API key
                                             of the account: N requests a second
                                             sustained, bursts of N (default for
                                             every key: 25 a second, bursts of 50).
                                             Warm functions apply it within a
                                             minute.
  limit show -account ID                     print the account's rate limit
  limit reset -account ID                    back to the default limit
` + destinationsUsage + `  agent show -account ID -project ID [-reveal-secrets]
                                             print the project's agent
                                             configuration as JSON; signing
                                             secrets and header values are
                                             masked unless -reveal-secrets

Global flags (before the command):
  -credentials FILE     work on the local dev server whose credentials file is
                        FILE (go run ./scripts/dev -credentials FILE writes it):
                        its agent_studio_url, internal_key and region; no AWS
                        needed, any store (default $OPSCTL_CREDENTIALS). Every
                        command but twilio works there.
  -region us|uk|eu      region the keys are bound to (default $SERVICE_REGION, else us)
  -table-prefix PREFIX  tables are PREFIX-config etc. (default voiceops-<region>,
                        the names the CDK stack gives; the dev server uses
                        voiceops-local)
  -config-table NAME    the config table's name, overriding -table-prefix
                        (default $CONFIG_TABLE)
  -twilio-secret ID     the Twilio accounts' secret (name or ARN; default
                        <table prefix>/twilio-accounts, the stack's; $TWILIO_SECRET)

Without -credentials, opsctl writes to DynamoDB: AWS credentials and region
come from the usual AWS environment or profile, and are checked before any
AWS call. The EC2 instance metadata service is not asked unless
AWS_EC2_METADATA_DISABLED=false (on an EC2 host with a role). Set
AWS_ENDPOINT_URL to work against LocalStack or moto.

Examples:
  go run ./scripts/opsctl -region us account create -name Acme -id acct_acme
  AWS_ENDPOINT_URL=http://127.0.0.1:5000 go run ./scripts/opsctl -table-prefix voiceops-local account list
  go run ./scripts/opsctl -credentials creds.json key list -account acct_demo1
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "opsctl:", err)
		os.Exit(2)
	}
}

// stores are what opsctl works on.
type stores struct {
	accounts voiceops.AccountStore
	agents   voiceops.AgentConfigStore
	dni      operatorapi.DNIAdder
	limits   operatorapi.LimitStore
	pacer    operatorapi.RateSetter
	secrets  twilio.SecretsWriter
	// destinations are the accounts' destination policies (config table).
	destinations destination.Store
}

// run executes one command. st, when not nil, replaces the DynamoDB stores
// (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, st *stores) (err error) {
	// An AWS error names the fix: which table, which credentials, which flag.
	var target awsTarget
	defer func() { err = target.explain(err) }()
	global := flag.NewFlagSet("opsctl", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	region := global.String("region", envOr(getenv, "SERVICE_REGION", "us"), "")
	prefix := global.String("table-prefix", "", "")
	configTable := global.String("config-table", getenv("CONFIG_TABLE"), "")
	twilioSecret := global.String("twilio-secret", getenv("TWILIO_SECRET"), "")
	devCreds := global.String("credentials", getenv("OPSCTL_CREDENTIALS"), "")
	if err := global.Parse(args); err != nil || global.NArg() == 0 || global.Arg(0) == "help" {
		fmt.Fprint(stdout, usage)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	if *devCreds != "" && st == nil {
		// The dev server's keys are of its own region.
		asked := *region
		if st, *region, err = devStores(*devCreds); err != nil {
			return err
		}
		explicit := false
		global.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "region" })
		if explicit && asked != *region {
			return fmt.Errorf("-region %s, but the dev server of %s serves region %s: drop -region", asked, *devCreds, *region)
		}
	}
	if _, ok := voiceops.LookupRegion(*region); !ok {
		return fmt.Errorf("-region must be us, uk or eu")
	}
	if *prefix == "" {
		*prefix = "voiceops-" + *region
	}
	if *twilioSecret == "" {
		*twilioSecret = *prefix + "/twilio-accounts"
	}
	if st == nil {
		names := dynamo.TableNamesFor(*prefix)
		if *configTable != "" {
			names.Config = *configTable
		}
		target = awsTarget{on: true, prefix: *prefix, names: names, endpoint: getenv("AWS_ENDPOINT_URL"), twilioSecret: *twilioSecret}
		cfg, err := awsConfig(ctx, getenv)
		if err != nil {
			return err
		}
		db := dynamodb.NewFromConfig(cfg)
		d := dynamo.NewConfig(db, names.Config, names.Deliveries)
		st = &stores{accounts: d, agents: d.AgentConfigs(), dni: d.DNI(), limits: dynamo.NewRequests(db, names.Requests, names.Config),
			pacer: dynamo.NewPacer(db, names.Calls), secrets: secretsmanager.NewFromConfig(cfg), destinations: dynamo.Destinations(d)}
	}
	accounts := st.accounts
	p := provision.Provisioner{Accounts: accounts, Region: voiceops.Region(*region), Now: time.Now}
	rest := global.Args()
	if len(rest) < 2 {
		return fmt.Errorf("missing subcommand; run opsctl help")
	}
	cmd, fs := rest[0]+" "+rest[1], flag.NewFlagSet(rest[0]+" "+rest[1], flag.ContinueOnError)
	fs.SetOutput(stdout)
	name := fs.String("name", "", "name")
	id := fs.String("id", "", "ID (default: generated)")
	account := fs.String("account", "", "account ID")
	project := fs.String("project", "", "project ID")
	kind := fs.String("kind", "", "key kind: api, agent, service, events")
	env := fs.String("env", "", "environment of an agent token: sandbox, pre-release or live (default live)")
	keyPrefix := fs.String("prefix", "", "only keys whose shown prefix starts with this")
	key := fs.String("key", "", "key ID or shown prefix")
	file := fs.String("file", "", "agent configuration file (JSON)")
	reveal := fs.Bool("reveal-secrets", false, "show signing secrets and header values in full")
	numbers := fs.String("numbers", "", "comma-separated E.164 numbers of a DNI pool")
	hold := fs.Duration("hold", voiceops.DefaultDNIHold, "how long a DNI reservation lasts")
	perSecond := fs.Float64("per-second", -1, "new outbound calls per second (0: the default)")
	twilioSID := fs.String("sid", "", "Twilio account SID (AC...)")
	from := fs.String("from", "", "caller ID: a Twilio number of the account, E.164")
	rate := fs.Int("rate", 0, "requests a second, sustained, of each API key")
	burst := fs.Int("burst", 0, "requests at once of each API key")
	countries := fs.String("countries", "", "comma-separated ISO 3166-1 alpha-2 codes the account may call (default: the region's)")
	allowTypes := fs.String("allow", "", "comma-separated number types refused by default that the account may call (none: no such type)")
	if err := fs.Parse(rest[2:]); err != nil {
		return err
	}
	need := func(v *string, flagName string) error {
		if *v == "" {
			return fmt.Errorf("%s: -%s is required", cmd, flagName)
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	switch cmd {
	case "account create":
		if err := need(name, "name"); err != nil {
			return err
		}
		a, err := p.CreateAccount(ctx, *id, *name)
		if err != nil {
			return describe(err, "account "+*id)
		}
		fmt.Fprintln(stdout, a.ID)
	case "account list":
		as, err := accounts.ListAccounts(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, "ACCOUNT\tNAME\tCREATED")
		for _, a := range as {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", a.ID, a.Name, a.CreatedAt.Format(time.RFC3339))
		}
	case "project create":
		if err := errors.Join(need(account, "account"), need(name, "name")); err != nil {
			return err
		}
		pr, err := p.CreateProject(ctx, *account, *id, *name)
		if err != nil {
			return describe(err, "account "+*account+" or project "+*id)
		}
		fmt.Fprintln(stdout, pr.ID)
	case "project list":
		if err := need(account, "account"); err != nil {
			return err
		}
		ps, err := accounts.ListProjects(ctx, *account)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, "PROJECT\tNAME\tCREATED")
		for _, pr := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", pr.ID, pr.Name, pr.CreatedAt.Format(time.RFC3339))
		}
	case "key create":
		if err := errors.Join(need(kind, "kind"), need(account, "account")); err != nil {
			return err
		}
		secret, k, err := p.CreateKeyIn(ctx, voiceops.KeyKind(*kind), *account, *project, voiceops.Environment(*env))
		if err != nil {
			return describe(err, "account "+*account+" or project "+*project)
		}
		fmt.Fprintf(stdout, "%s\n# key ID %s; store the key now: it is not shown again\n", secret, k.ID)
	case "key list":
		if err := need(account, "account"); err != nil {
			return err
		}
		ks, err := accounts.ListKeys(ctx, *account)
		if err != nil {
			return err
		}
		fmt.Fprintln(tw, "KEY ID\tKIND\tSCOPE\tPREFIX\tCREATED\tREVOKED")
		for _, k := range ks {
			if !strings.HasPrefix(k.Prefix, *keyPrefix) {
				continue
			}
			scope, revoked := "account", "-"
			if k.ProjectID != "" {
				scope = "project " + k.ProjectID
			}
			if k.RevokedAt != nil {
				revoked = k.RevokedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s…\t%s\t%s\n", k.ID, k.Kind, scope, k.Prefix, k.CreatedAt.Format(time.RFC3339), revoked)
		}
	case "key revoke":
		if err := errors.Join(need(account, "account"), need(key, "key")); err != nil {
			return err
		}
		k, err := p.RevokeKey(ctx, *account, *key)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s (%s…) at %s\n", k.ID, k.Prefix, k.RevokedAt.Format(time.RFC3339))
	case "agent load":
		if err := errors.Join(need(account, "account"), need(project, "project"), need(file, "file")); err != nil {
			return err
		}
		c, err := loadAgentConfig(*file, *account, *project)
		if err != nil {
			return err
		}
		if err := agent.PutConfig(ctx, st.agents, c); err != nil {
			return describe(err, "project "+*project+" in account "+*account)
		}
		fmt.Fprintf(stdout, "stored the agent configuration of %s/%s (retention %d days)\n\n", c.AccountID, c.ProjectID, c.RetentionDays)
		printAgentConfig(tw, c)
	case "dni add":
		if err := errors.Join(need(account, "account"), need(project, "project"), need(numbers, "numbers")); err != nil {
			return err
		}
		if st.dni == nil {
			return fmt.Errorf("dni add: no DNI store")
		}
		if *hold <= 0 {
			return fmt.Errorf("dni add: -hold must be positive")
		}
		var nums []string
		for _, n := range strings.Split(*numbers, ",") {
			if n = strings.TrimSpace(n); n != "" {
				nums = append(nums, n)
			}
		}
		if err := st.dni.AddNumbers(ctx, *account, *project, nums, *hold); err != nil {
			var ve *voiceops.Error
			if errors.As(err, &ve) && ve.Kind == voiceops.KindInvalid && len(ve.Fields) > 0 {
				return fmt.Errorf("dni add: %s %s; nothing was stored", ve.Fields[0].Field, ve.Fields[0].Message)
			}
			return describe(err, "project "+*project+" in account "+*account)
		}
		fmt.Fprintf(stdout, "the DNI pool of %s/%s has %d more or updated numbers; a reservation lasts %s\n", *account, *project, len(nums), *hold)
	case "outbound rate":
		if err := need(account, "account"); err != nil {
			return err
		}
		if *perSecond < 0 || *perSecond > voiceops.MaxOutboundRate {
			return fmt.Errorf("outbound rate: -per-second must be from 0 (the default) to %g calls per second", voiceops.MaxOutboundRate)
		}
		if _, err := accounts.GetAccount(ctx, *account); err != nil {
			return describe(err, "account "+*account)
		}
		if err := st.pacer.SetRate(ctx, *account, *perSecond); err != nil {
			return err
		}
		eff := *perSecond
		if eff == 0 {
			eff = voiceops.DefaultOutboundRate
		}
		fmt.Fprintf(stdout, "account %s places at most %g new calls per second (one every %s)\n", *account, eff, voiceops.SlotInterval(eff))
	case "twilio set":
		if err := errors.Join(need(account, "account"), need(twilioSID, "sid"), need(from, "from")); err != nil {
			return err
		}
		if st.secrets == nil {
			return errNoTwilioSecret
		}
		token := getenv("TWILIO_AUTH_TOKEN")
		if token == "" {
			return fmt.Errorf("twilio set: put the auth token in $TWILIO_AUTH_TOKEN (never a flag: it would show in the process list and shell history)")
		}
		if _, err := accounts.GetAccount(ctx, *account); err != nil {
			return describe(err, "account "+*account)
		}
		a := twilio.Account{AccountSID: *twilioSID, AuthToken: token, FromNumber: *from}
		if err := twilio.SetAccount(ctx, st.secrets, *twilioSecret, *account, a); err != nil {
			return fmt.Errorf("twilio set: %w", err)
		}
		fmt.Fprintf(stdout, "stored the Twilio account of %s in %s: SID %s, caller ID %s (the auth token is not shown)\n", *account, *twilioSecret, a.AccountSID, a.FromNumber)
	case "twilio show":
		if err := need(account, "account"); err != nil {
			return err
		}
		if st.secrets == nil {
			return errNoTwilioSecret
		}
		a, err := (&twilio.SecretCredentials{Client: st.secrets, SecretID: *twilioSecret, Now: time.Now}).Twilio(ctx, *account)
		if errors.Is(err, voiceops.ErrNotFound) {
			return fmt.Errorf("account %s has no Twilio account in %s (twilio set stores one)", *account, *twilioSecret)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "account %s: Twilio SID %s, caller ID %s, auth token set (not shown)\n", *account, a.AccountSID, a.FromNumber)
	case "destinations show", "destinations set", "destinations reset":
		return destinationsCommand(ctx, cmd, st, voiceops.Region(*region), *account, *countries, *allowTypes, stdout)
	case "limit set", "limit show", "limit reset":
		return limitCommand(ctx, cmd, st, accounts, *account, ratelimit.Limit{Rate: *rate, Burst: *burst}, stdout)
	case "agent show":
		if err := errors.Join(need(account, "account"), need(project, "project")); err != nil {
			return err
		}
		c, err := agent.GetConfig(ctx, st.agents, *account, *project)
		if errors.Is(err, voiceops.ErrNotFound) {
			return fmt.Errorf("project %s of account %s has no agent configuration (agent load stores one)", *project, *account)
		} else if err != nil {
			return err
		}
		if !*reveal {
			c = maskSecrets(c)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(c); err != nil {
			return err
		}
		_, err = stdout.Write(buf.Bytes())
		return err
	default:
		return fmt.Errorf("unknown command %q; run opsctl help", cmd)
	}
	return nil
}

// limitCommand sets, shows or removes an account's rate limit override.
func limitCommand(ctx context.Context, cmd string, st *stores, accounts voiceops.AccountStore, account string, l ratelimit.Limit, stdout io.Writer) error {
	if account == "" {
		return fmt.Errorf("%s: -account is required", cmd)
	}
	if st.limits == nil {
		return fmt.Errorf("%s: no rate limit store", cmd)
	}
	if _, err := accounts.GetAccount(ctx, account); err != nil {
		return describe(err, "account "+account)
	}
	switch cmd {
	case "limit set":
		if err := l.Validate(); err != nil {
			return fmt.Errorf("limit set: %v; nothing was stored", err)
		}
		if err := st.limits.SetAccountLimit(ctx, account, &l); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "every API key of %s: %d requests a second, bursts of %d (warm functions apply it within %s)\n", account, l.Rate, l.Burst, ratelimit.OverrideTTL)
	case "limit reset":
		if err := st.limits.SetAccountLimit(ctx, account, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "every API key of %s: the default, %d requests a second, bursts of %d\n", account, ratelimit.Default.Rate, ratelimit.Default.Burst)
	default:
		got, err := st.limits.AccountLimit(ctx, account)
		source := "override"
		if errors.Is(err, voiceops.ErrNotFound) {
			got, source = ratelimit.Default, "default"
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d requests a second, bursts of %d, per API key (%s)\n", account, got.Rate, got.Burst, source)
	}
	return nil
}

// errNoTwilioSecret: the dev server keeps no Twilio secret.
var errNoTwilioSecret = errors.New("the dev server keeps no Twilio secret: it takes one Twilio account from its environment " +
	"(TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM_NUMBER with -telephony twilio); twilio set and show work on a deployed stack, without -credentials")

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// describe turns store errors into operator-friendly messages.
func describe(err error, what string) error {
	switch {
	case errors.Is(err, voiceops.ErrNotFound):
		return fmt.Errorf("no such %s", what)
	case errors.Is(err, voiceops.ErrAlreadyExists):
		return fmt.Errorf("%s already exists", what)
	}
	return err
}

// loadAgentConfig reads and checks a configuration file for a project. The
// file may name the account and project; they must then be the flags'.
func loadAgentConfig(file, accountID, projectID string) (agent.Config, error) {
	f, err := os.Open(file)
	if err != nil {
		return agent.Config{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, agent.MaxConfigBytes+1))
	if err != nil {
		return agent.Config{}, err
	}
	// Deployed stacks never call loopback agents; only the dev server seeds
	// such configurations, in its own process.
	c, err := agent.ParseConfig(b, voiceops.URLPolicy{})
	var ce *agent.ConfigError
	if errors.As(err, &ce) {
		var msg strings.Builder
		fmt.Fprintf(&msg, "%s is not a valid agent configuration; nothing was stored:", file)
		for _, fe := range ce.Fields {
			if fe.Field == "" {
				fmt.Fprintf(&msg, "\n  %s", fe.Message)
			} else {
				fmt.Fprintf(&msg, "\n  %s: %s", fe.Field, fe.Message)
			}
		}
		return agent.Config{}, errors.New(msg.String())
	} else if err != nil {
		return agent.Config{}, err
	}
	if c.AccountID != "" && c.AccountID != accountID || c.ProjectID != "" && c.ProjectID != projectID {
		return agent.Config{}, fmt.Errorf("%s is the configuration of %s/%s, not of %s/%s", file, c.AccountID, c.ProjectID, accountID, projectID)
	}
	c.AccountID, c.ProjectID = accountID, projectID
	return c, nil
}

// printAgentConfig lists a configuration's variants and functions. URLs are
// shown by host only: their query may carry a token.
func printAgentConfig(tw *tabwriter.Writer, c agent.Config) {
	fmt.Fprintln(tw, "VARIANT\tNAME\tDEFAULT\tAGENT")
	for _, v := range c.Variants {
		def := ""
		if v.Default {
			def = "yes"
		}
		var what string
		switch v.Agent.Type {
		case agent.TypeScripted:
			what = fmt.Sprintf("scripted, %d rules", len(v.Agent.Scripted.Rules))
		case agent.TypeHTTP:
			what = fmt.Sprintf("http, %s, timeout %dms", urlHost(v.Agent.HTTP.URL), v.Agent.HTTP.TimeoutMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", v.ID, v.Name, def, what)
	}
	if len(c.Functions) == 0 {
		return
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "FUNCTION\tTARGET\tTIMEOUT")
	for _, h := range slices.Sorted(maps.Keys(c.Functions)) {
		f := c.Functions[h]
		target := f.LambdaARN
		if f.URL != "" {
			target = "https: " + urlHost(f.URL)
		}
		fmt.Fprintf(tw, "%s\t%s\t%dms\n", h, target, f.TimeoutMS)
	}
}

func urlHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return u.Host
}

// maskSecrets hides signing secrets and custom header values (an
// Authorization header is a secret too).
func maskSecrets(c agent.Config) agent.Config {
	c = c.Clone()
	const masked = "(masked; -reveal-secrets shows it)"
	for _, v := range c.Variants {
		if h := v.Agent.HTTP; h != nil {
			h.SigningSecret = masked
			for k := range h.Headers {
				h.Headers[k] = masked
			}
		}
	}
	for hook, f := range c.Functions {
		if f.SigningSecret != "" {
			f.SigningSecret = masked
			c.Functions[hook] = f
		}
	}
	return c
}
