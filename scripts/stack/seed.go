package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/provision"
	"github.com/voiceops/opsapi/shared/tables"
	"github.com/voiceops/opsapi/shared/voiceops"

	"time"
)

// Credentials is the dev server's credentials JSON (DECISIONS.md, "The
// local dev server"; scripts/dev/seed.go): the same keys, so that scripts
// and the README's walkthrough work against either.
type Credentials struct {
	AgentStudioURL string               `json:"agent_studio_url"`
	BaseURL        string               `json:"base_url"`
	Region         string               `json:"region"`
	InternalKey    string               `json:"internal_key"`
	Accounts       []AccountCredentials `json:"accounts"`
}

// AccountCredentials is one seeded account.
type AccountCredentials struct {
	AccountID string               `json:"account_id"`
	APIKey    string               `json:"api_key"`
	Projects  []ProjectCredentials `json:"projects"`
}

// ProjectCredentials is one seeded project with a key of every kind.
type ProjectCredentials struct {
	ProjectID        string `json:"project_id"`
	APIKey           string `json:"api_key"`
	AgentToken       string `json:"agent_token"`
	ServiceAuthToken string `json:"service_auth_token"`
	EventsKey        string `json:"events_key"`
}

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
	c := Credentials{Region: region}
	names := s.Topology.TableNames()
	if names.Config == "" {
		return c, fmt.Errorf("no function names the config table (%s)", tables.Config.EnvVar)
	}
	db := dynamodb.NewFromConfig(s.AWS)
	stores := dynamo.NewStores(db, names)
	cfgStore := dynamo.NewConfig(db, names.Config, names.Deliveries)
	configs := cfgStore.AgentConfigs()
	p := provision.Provisioner{Accounts: stores.Accounts, Region: voiceops.Region(region), Now: time.Now}
	for i := 1; i <= 2; i++ {
		acctID := fmt.Sprintf("acct_demo%d", i)
		if _, err := p.CreateAccount(ctx, acctID, fmt.Sprintf("Demo account %d", i)); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
			return c, err
		}
		apiKey, _, err := p.CreateKey(ctx, voiceops.KeyAPI, acctID, "")
		if err != nil {
			return c, err
		}
		ac := AccountCredentials{AccountID: acctID, APIKey: apiKey}
		for _, suffix := range []string{"a", "b"} {
			projID := fmt.Sprintf("proj_demo%d%s", i, suffix)
			if _, err := p.CreateProject(ctx, acctID, projID, fmt.Sprintf("Demo project %d%s", i, suffix)); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
				return c, err
			}
			if err := agent.PutConfig(ctx, configs, agent.DemoConfig(acctID, projID)); err != nil {
				return c, err
			}
			pc := ProjectCredentials{ProjectID: projID}
			for _, k := range []struct {
				kind voiceops.KeyKind
				dst  *string
			}{{voiceops.KeyAPI, &pc.APIKey}, {voiceops.KeyAgent, &pc.AgentToken}, {voiceops.KeyService, &pc.ServiceAuthToken}, {voiceops.KeyEvents, &pc.EventsKey}} {
				if *k.dst, _, err = p.CreateKey(ctx, k.kind, acctID, projID); err != nil {
					return c, err
				}
			}
			// Like the dev server: three fictional UK numbers in the
			// project's DNI pool, so that a reservation works at once.
			var numbers []string
			for n := range 3 {
				numbers = append(numbers, fmt.Sprintf("+44163296%d%d%02d", i, len(ac.Projects), n))
			}
			if err := cfgStore.DNI().AddNumbers(ctx, acctID, projID, numbers, 0); err != nil {
				return c, err
			}
			ac.Projects = append(ac.Projects, pc)
		}
		c.Accounts = append(c.Accounts, ac)
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
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = stdout.Write(b)
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
