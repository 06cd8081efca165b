// Package demoseed seeds the demo tenants and writes the credentials JSON
// (docs/getting-started.md, "The dev server"). The dev server (scripts/dev) and
// the stack runner (scripts/stack) both seed through it, so that scripts
// and the walkthroughs of docs/ find the same accounts, projects, keys,
// agent and DNI pools against either.
package demoseed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/ops/provision"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Credentials is the credentials JSON.
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

// Stores is where the seed goes: accounts and keys through the
// provisioner (as the operator makes them), the demo agent's config, and
// the DNI pools.
type Stores struct {
	Provisioner provision.Provisioner
	Configs     voiceops.AgentConfigStore
	DNI         voiceops.DNIStore
}

// Seed creates two accounts with two projects each (reusing them where
// the store already has them), each project with a key of every kind, the
// demo scripted agent and a DNI pool of three numbers
// (+44163296<account><project><n>, fictional UK numbers, default hold) so
// that a reservation works at once. The keys of prev are kept where it has
// them (a restart keeps a shell's variables working); the others are new.
// The result names the accounts and the provisioner's region; the caller
// fills in the URLs and the internal key.
func Seed(ctx context.Context, s Stores, prev *Credentials) (Credentials, error) {
	p := s.Provisioner
	c := Credentials{Region: string(p.Region)}
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
		for j, suffix := range []string{"a", "b"} {
			projID := fmt.Sprintf("proj_demo%d%s", i, suffix)
			if _, err := p.CreateProject(ctx, acctID, projID, fmt.Sprintf("Demo project %d%s", i, suffix)); err != nil && !errors.Is(err, voiceops.ErrAlreadyExists) {
				return c, err
			}
			if err := agent.PutConfig(ctx, s.Configs, agent.DemoConfig(acctID, projID)); err != nil {
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
			var numbers []string
			for n := range 3 {
				numbers = append(numbers, fmt.Sprintf("+44163296%d%d%02d", i, j, n))
			}
			if err := s.DNI.AddNumbers(ctx, acctID, projID, numbers, 0); err != nil {
				return c, fmt.Errorf("seeding the DNI pool of %s %s: %w", acctID, projID, err)
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

// Previous reads the credentials file a former run wrote, for Seed to
// keep its keys: nil when there is none. A file that is not one, or is of
// another region, is an error naming the way out (-fresh), never silently
// replaced.
func Previous(path string, region voiceops.Region) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Credentials
	if err := json.Unmarshal(b, &c); err != nil || c.InternalKey == "" {
		return nil, fmt.Errorf("%s is not a credentials file (remove it, or start with -fresh to overwrite it)", path)
	}
	if c.Region != string(region) {
		return nil, fmt.Errorf("%s holds keys of region %q, not %q (start with -fresh for new keys)", path, c.Region, region)
	}
	return &c, nil
}

// Write writes c as indented JSON to path, or to stdout when path is
// empty. The file is written whole then renamed, so that a script polling
// for it never reads half of it.
func Write(c Credentials, path string, stdout io.Writer) error {
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
