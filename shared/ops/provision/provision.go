// Package provision is what the operator does: create accounts, projects and
// keys, list and revoke keys. The operator CLI (scripts/opsctl) and the dev
// server's seeding both use it, so a key made either way is the same.
package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// Provisioner writes to the account store of one region.
type Provisioner struct {
	Accounts voiceops.AccountStore
	Region   voiceops.Region
	Now      func() time.Time
}

func (p Provisioner) now() time.Time { return p.Now().UTC().Truncate(time.Millisecond) }

// CreateAccount creates an account; an empty id gets a random one.
func (p Provisioner) CreateAccount(ctx context.Context, id, name string) (voiceops.Account, error) {
	if id == "" {
		id = voiceops.NewID(voiceops.PrefixAccount)
	}
	if !voiceops.ValidTenantID(id) {
		return voiceops.Account{}, fmt.Errorf("account ID %q: use 1 to 64 of A-Z a-z 0-9 _ -", id)
	}
	a := voiceops.Account{ID: id, Name: name, CreatedAt: p.now()}
	return a, p.Accounts.CreateAccount(ctx, a)
}

// CreateProject creates a project of an existing account.
func (p Provisioner) CreateProject(ctx context.Context, accountID, id, name string) (voiceops.Project, error) {
	if id == "" {
		id = voiceops.NewID(voiceops.PrefixProject)
	}
	if !voiceops.ValidTenantID(id) {
		return voiceops.Project{}, fmt.Errorf("project ID %q: use 1 to 64 of A-Z a-z 0-9 _ -", id)
	}
	pr := voiceops.Project{ID: id, AccountID: accountID, Name: name, CreatedAt: p.now()}
	return pr, p.Accounts.CreateProject(ctx, pr)
}

// CreateKey makes a new key and stores its digest. The returned string is
// the only time the key exists in full: hand it over, it cannot be shown
// again. Agent, service and events keys are bound to a project.
func (p Provisioner) CreateKey(ctx context.Context, kind voiceops.KeyKind, accountID, projectID string) (string, voiceops.Key, error) {
	return p.CreateKeyIn(ctx, kind, accountID, projectID, "")
}

// CreateKeyIn is CreateKey for an agent token bound to one environment of
// its project (a connector's): env is sandbox, pre-release or live, and
// empty means live. Other kinds take no environment.
func (p Provisioner) CreateKeyIn(ctx context.Context, kind voiceops.KeyKind, accountID, projectID string, env voiceops.Environment) (string, voiceops.Key, error) {
	if _, ok := voiceops.ParseEnum(string(kind), voiceops.KeyKinds); !ok {
		return "", voiceops.Key{}, fmt.Errorf("key kind %q: %s", kind, voiceops.OneOf(voiceops.KeyKinds))
	}
	if kind != voiceops.KeyAPI && projectID == "" {
		return "", voiceops.Key{}, fmt.Errorf("a %s key belongs to a project: give the project", kind)
	}
	switch {
	case kind == voiceops.KeyAgent && env == "":
		env = voiceops.EnvLive
	case kind == voiceops.KeyAgent:
		if _, ok := voiceops.ParseEnum(string(env), voiceops.Environments); !ok {
			return "", voiceops.Key{}, fmt.Errorf("environment %q: %s", env, voiceops.OneOf(voiceops.Environments))
		}
	case env != "":
		return "", voiceops.Key{}, fmt.Errorf("only agent tokens are bound to an environment")
	}
	secret := keys.New(kind, p.Region)
	k := voiceops.Key{
		ID: voiceops.NewID(voiceops.PrefixKey), Digest: keys.Digest(secret), Prefix: keys.Prefix(secret),
		Kind: kind, Region: p.Region, AccountID: accountID, ProjectID: projectID, Environment: string(env), CreatedAt: p.now(),
	}
	if err := p.Accounts.CreateKey(ctx, k); err != nil {
		return "", voiceops.Key{}, err
	}
	return secret, k, nil
}

// RevokeKey revokes a key of an account, named by its ID or by its shown
// prefix. A prefix must match exactly one key.
func (p Provisioner) RevokeKey(ctx context.Context, accountID, idOrPrefix string) (voiceops.Key, error) {
	ks, err := p.Accounts.ListKeys(ctx, accountID)
	if err != nil {
		return voiceops.Key{}, err
	}
	var match []voiceops.Key
	for _, k := range ks {
		if k.ID == idOrPrefix || k.Prefix == idOrPrefix {
			match = append(match, k)
		}
	}
	switch len(match) {
	case 0:
		return voiceops.Key{}, fmt.Errorf("account %s has no key %q", accountID, idOrPrefix)
	case 1:
		return p.Accounts.RevokeKey(ctx, accountID, match[0].ID, p.now())
	}
	return voiceops.Key{}, fmt.Errorf("%d keys match %q; give the key ID", len(match), idOrPrefix)
}

// KeepKey stores a key whose secret already exists (the dev server keeps
// the keys of its credentials file across restarts). The secret must be a
// well-formed key of kind and of the provisioner's region. A key already
// stored with that secret is kept as it is when it is the same account's
// and project's and not revoked; otherwise it is an error.
func (p Provisioner) KeepKey(ctx context.Context, secret string, kind voiceops.KeyKind, accountID, projectID string) error {
	parsed, err := keys.Parse(secret)
	if err != nil {
		return fmt.Errorf("key %s: %w", keys.Prefix(secret), err)
	}
	if parsed.Kind != kind || parsed.Region != p.Region {
		return fmt.Errorf("key %s is a %s key of region %s, not a %s key of region %s", keys.Prefix(secret), parsed.Kind, parsed.Region, kind, p.Region)
	}
	k := voiceops.Key{
		ID: voiceops.NewID(voiceops.PrefixKey), Digest: keys.Digest(secret), Prefix: keys.Prefix(secret),
		Kind: kind, Region: p.Region, AccountID: accountID, ProjectID: projectID, CreatedAt: p.now(),
	}
	if kind == voiceops.KeyAgent {
		k.Environment = string(voiceops.EnvLive)
	}
	err = p.Accounts.CreateKey(ctx, k)
	if !errors.Is(err, voiceops.ErrAlreadyExists) {
		return err
	}
	// A persistent store may hold it already (the dev server on DynamoDB).
	stored, lerr := p.Accounts.KeyByDigest(ctx, k.Digest)
	switch {
	case lerr != nil:
		return lerr
	case stored.AccountID != accountID || stored.ProjectID != projectID || stored.Kind != kind:
		return fmt.Errorf("key %s is stored for account %q project %q", k.Prefix, stored.AccountID, stored.ProjectID)
	case stored.RevokedAt != nil:
		return fmt.Errorf("key %s was revoked", k.Prefix)
	}
	return nil
}
