package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/voiceops/opsapi/shared/agent"
	"github.com/voiceops/opsapi/shared/keys"
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
// persistent store already has them) with a key of every kind: the keys of
// prev where it has them (a restart keeps the shell's variables working),
// fresh ones otherwise.
func seed(ctx context.Context, p provision.Provisioner, configs voiceops.AgentConfigStore, url string, region voiceops.Region, internalKey string, prev *Credentials) (Credentials, error) {
	c := Credentials{AgentStudioURL: url, BaseURL: url, Region: string(region), InternalKey: internalKey}
	for i := 1; i <= 2; i++ {
		acctID := fmt.Sprintf("acct_demo%d", i)
		if _, err := p.CreateAccount(ctx, acctID, fmt.Sprintf("Demo account %d", i)); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
			return c, err
		}
		old := prev.account(acctID)
		ac := AccountCredentials{AccountID: acctID}
		var err error
		if ac.APIKey, err = keepOrCreate(ctx, p, voiceops.KeyAPI, acctID, "", old.APIKey); err != nil {
			return c, err
		}
		for _, suffix := range []string{"a", "b"} {
			projID := fmt.Sprintf("proj_demo%d%s", i, suffix)
			if _, err := p.CreateProject(ctx, acctID, projID, fmt.Sprintf("Demo project %d%s", i, suffix)); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
				return c, err
			}
			// Every demo project talks with the demo scripted agent.
			if err := agent.PutConfig(ctx, configs, agent.DemoConfig(acctID, projID)); err != nil {
				return c, err
			}
			oldp := old.project(projID)
			pc := ProjectCredentials{ProjectID: projID}
			for _, k := range []struct {
				kind voiceops.KeyKind
				dst  *string
				old  string
			}{{voiceops.KeyAPI, &pc.APIKey, oldp.APIKey}, {voiceops.KeyAgent, &pc.AgentToken, oldp.AgentToken},
				{voiceops.KeyService, &pc.ServiceAuthToken, oldp.ServiceAuthToken}, {voiceops.KeyEvents, &pc.EventsKey, oldp.EventsKey}} {
				if *k.dst, err = keepOrCreate(ctx, p, k.kind, acctID, projID, k.old); err != nil {
					return c, err
				}
			}
			ac.Projects = append(ac.Projects, pc)
		}
		c.Accounts = append(c.Accounts, ac)
	}
	return c, nil
}

// keepOrCreate stores the key old when there is one, else makes a new one.
func keepOrCreate(ctx context.Context, p provision.Provisioner, kind voiceops.KeyKind, accountID, projectID, old string) (string, error) {
	if old == "" {
		secret, _, err := p.CreateKey(ctx, kind, accountID, projectID)
		return secret, err
	}
	if err := p.KeepKey(ctx, old, kind, accountID, projectID); err != nil {
		return "", fmt.Errorf("keeping the %s key of %s %s: %w (start with -fresh for new keys)", kind, accountID, projectID, err)
	}
	return old, nil
}

func (c *Credentials) account(id string) *AccountCredentials {
	if c != nil {
		for i := range c.Accounts {
			if c.Accounts[i].AccountID == id {
				return &c.Accounts[i]
			}
		}
	}
	return &AccountCredentials{}
}

func (a *AccountCredentials) project(id string) ProjectCredentials {
	for _, p := range a.Projects {
		if p.ProjectID == id {
			return p
		}
	}
	return ProjectCredentials{}
}

// previousCredentials reads the credentials file a former run wrote: nil
// when there is none. A file that is not one, or is of another region, is
// an error naming the way out (-fresh), never silently replaced.
func previousCredentials(path string, region voiceops.Region) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil || c.InternalKey == "" {
		return nil, fmt.Errorf("%s is not a credentials file of the dev server (remove it, or start with -fresh to overwrite it)", path)
	}
	if c.Region != string(region) {
		return nil, fmt.Errorf("%s holds keys of region %q, not %q (start with -fresh for new keys)", path, c.Region, region)
	}
	if p, err := keys.Parse(c.InternalKey); err != nil || p.Kind != keys.KindInternal || p.Region != region {
		return nil, fmt.Errorf("%s: internal_key is not an internal key of region %q (start with -fresh for new keys)", path, region)
	}
	return &c, nil
}
