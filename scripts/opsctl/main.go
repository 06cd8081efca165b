// Command opsctl is the operator's tool: it creates accounts and projects,
// and creates, lists and revokes keys, directly in a region's DynamoDB
// config table. Run `go run ./scripts/opsctl help` for usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/provision"
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
  key create -kind KIND -account ID [-project ID]
                                             create a key and print it ONCE;
                                             KIND is api (x-api-key), agent
                                             (X-TOKEN), service
                                             (X-Service-Auth-Token) or events
                                             (X-Api-Key of external events).
                                             An api key without -project is
                                             account-scoped (needed by the
                                             alerts and webhooks endpoints);
                                             the other kinds need -project.
  key list -account ID [-prefix PREFIX]      list keys: ID, kind, scope, shown
                                             prefix, created, revoked (a key is
                                             never shown in full again)
  key revoke -account ID -key KEY_ID|PREFIX  revoke a key (takes effect within
                                             30 seconds on warm functions)

Global flags (before the command):
  -region us|uk|eu      region the keys are bound to (default $SERVICE_REGION, else us)
  -table-prefix PREFIX  tables are PREFIX-config etc. (default voiceops-<region>,
                        the names the CDK stack gives; the dev server uses
                        voiceops-local)
  -config-table NAME    the config table's name, overriding -table-prefix
                        (default $CONFIG_TABLE)

AWS credentials and region come from the usual AWS environment or profile.
Set AWS_ENDPOINT_URL to work against LocalStack or moto.
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "opsctl:", err)
		os.Exit(2)
	}
}

// run executes one command. accounts, when not nil, replaces the DynamoDB
// store (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, accounts voiceops.AccountStore) error {
	global := flag.NewFlagSet("opsctl", flag.ContinueOnError)
	global.SetOutput(io.Discard)
	region := global.String("region", envOr(getenv, "SERVICE_REGION", "us"), "")
	prefix := global.String("table-prefix", "", "")
	configTable := global.String("config-table", getenv("CONFIG_TABLE"), "")
	if err := global.Parse(args); err != nil || global.NArg() == 0 || global.Arg(0) == "help" {
		fmt.Fprint(stdout, usage)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			return err
		}
		return nil
	}
	if _, ok := voiceops.LookupRegion(*region); !ok {
		return fmt.Errorf("-region must be us, uk or eu")
	}
	if accounts == nil {
		if *prefix == "" {
			*prefix = "voiceops-" + *region
		}
		names := dynamo.TableNamesFor(*prefix)
		if *configTable != "" {
			names.Config = *configTable
		}
		cfg, err := lambdamain.AWSConfig(ctx)
		if err != nil {
			return err
		}
		accounts = dynamo.New(dynamodb.NewFromConfig(cfg), names).Stores().Accounts
	}
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
	keyPrefix := fs.String("prefix", "", "only keys whose shown prefix starts with this")
	key := fs.String("key", "", "key ID or shown prefix")
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
		secret, k, err := p.CreateKey(ctx, voiceops.KeyKind(*kind), *account, *project)
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
	default:
		return fmt.Errorf("unknown command %q; run opsctl help", cmd)
	}
	return nil
}

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
