package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/demoseed"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/provision"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The dev server's credentials JSON (docs/getting-started.md, "The dev
// server"), seeded by the same code (shared/demoseed), so that scripts and
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
// each with a key of every kind, the demo agent and a DNI pool, in the stack's tables
// (as the operator does with opsctl: straight to DynamoDB), and reads the
// internal key from its secret.
func seedAccounts(ctx context.Context, s *Stack, region string, fns map[string]*function, secretARNs map[string]string, sm *secretsmanager.Client) (Credentials, error) {
	names := s.Topology.TableNames()
	if names.Config == "" {
		return Credentials{}, fmt.Errorf("no function names the config table (%s)", tables.Config.EnvVar)
	}
	db := dynamodb.NewFromConfig(s.AWS)
	stores := dynamo.NewStores(db, names)
	cfgStore := dynamo.NewConfig(db, names.Config, names.Deliveries)
	c, err := demoseed.Seed(ctx, demoseed.Stores{Provisioner: provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.Region(region), Now: time.Now},
		Configs: cfgStore.AgentConfigs(), DNI: cfgStore.DNI()}, nil)
	if err != nil {
		return c, err
	}
	// The internal key is the value of the secret the intake reads.
	for _, f := range fns {
		if id := f.Env[lambdamain.InternalKeyEnv]; id != "" {
			out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
			if err != nil {
				return c, fmt.Errorf("reading the internal key: %w", err)
			}
			c.InternalKey = *out.SecretString
			break
		}
	}
	return c, nil
}

func writeCredentials(c Credentials, path string, stdout io.Writer) error {
	return demoseed.Write(c, path, stdout)
}
