package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/provision"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Credentials is the JSON the dev server writes (DECISIONS.md, "The local
// dev server").
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

// seed creates two accounts with two projects each (reusing them if a
// persistent store already has them) and fresh keys of every kind.
func seed(ctx context.Context, p provision.Provisioner, configs voiceops.AgentConfigStore, url string, region voiceops.Region, internalKey string) (Credentials, error) {
	c := Credentials{AgentStudioURL: url, BaseURL: url, Region: string(region), InternalKey: internalKey}
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
			// Every demo project talks with the demo scripted agent.
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
			ac.Projects = append(ac.Projects, pc)
		}
		c.Accounts = append(c.Accounts, ac)
	}
	return c, nil
}
