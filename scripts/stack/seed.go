package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/ops/demoseed"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/platform/tables"
	"github.com/voiceops/opsapi/shared/store/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The dev server's credentials JSON (docs/getting-started.md, "The dev
// server"), seeded by the same code (shared/ops/demoseed), so that scripts and
// the walkthroughs of docs/ work against either.
type (
	Credentials        = demoseed.Credentials
	AccountCredentials = demoseed.AccountCredentials
	ProjectCredentials = demoseed.ProjectCredentials
)

// TableNames reads the physical table names from the functions'
// environment in the template (the names CDK gives them).
func (t topology) TableNames() dynamo.TableNames {
	env := map[string]string{}
	for _, f := range t.Functions {
		for _, tb := range tables.All {
			if v := f.Env[tb.EnvVar]; v != "" {
				env[tb.EnvVar] = v
			}
		}
	}
	return dynamo.TableNamesFromEnv(func(k string) string { return env[k] })
}

// seedAccounts creates the dev server's two demo accounts, two projects
// each with a key of every kind, the demo agent and a DNI pool, in the
// stack's tables (as the operator does with opsctl: straight to DynamoDB),
// and reads the internal key from its secret. With prev (the credentials
// file of a former run), its keys are kept, the internal key too: the
// secret is set to it, as an operator would put the old value back.
func seedAccounts(ctx context.Context, db *dynamodb.Client, names dynamo.TableNames, region string, internalSecret string,
	sm *secretsmanager.Client, prev *Credentials) (Credentials, error) {
	if names.Config == "" {
		return Credentials{}, fmt.Errorf("no function names the config table (%s)", tables.Config.EnvVar)
	}
	stores := dynamo.NewStores(db, names)
	cfgStore := dynamo.NewConfig(db, names.Config, names.Deliveries)
	c, err := demoseed.Seed(ctx, demoseed.Stores{Provisioner: provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.Region(region), Now: time.Now},
		Configs: cfgStore.AgentConfigs(), DNI: cfgStore.DNI()}, prev)
	if err != nil || internalSecret == "" {
		return c, err
	}
	if prev != nil {
		if _, err := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &internalSecret, SecretString: &prev.InternalKey}); err != nil {
			return c, fmt.Errorf("keeping the internal key: %w", err)
		}
	}
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &internalSecret})
	if err != nil {
		return c, fmt.Errorf("reading the internal key: %w", err)
	}
	c.InternalKey = *out.SecretString
	return c, nil
}

func writeCredentials(c Credentials, path string, stdout io.Writer) error {
	return demoseed.Write(c, path, stdout)
}
