package main

import (
	"context"
	"fmt"
	"io"

	"github.com/voiceops/opsapi/shared/ops/demoseed"
	"github.com/voiceops/opsapi/shared/platform/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The credentials JSON the dev server writes (docs/getting-started.md, "The dev server"); shared/ops/demoseed seeds it, as for the stack runner.
type (
	Credentials        = demoseed.Credentials
	AccountCredentials = demoseed.AccountCredentials
	ProjectCredentials = demoseed.ProjectCredentials
)

// seed seeds the demo accounts (shared/ops/demoseed), keeping prev's keys, and
// names this server's URL and internal key.
func seed(ctx context.Context, s demoseed.Stores, url, internalKey string, prev *Credentials) (Credentials, error) {
	c, err := demoseed.Seed(ctx, s, prev)
	c.AgentStudioURL, c.BaseURL, c.InternalKey = url, url, internalKey
	return c, err
}

func writeCredentials(c Credentials, path string, stdout io.Writer) error {
	return demoseed.Write(c, path, stdout)
}

// previousCredentials reads the credentials file a former run wrote
// (demoseed.Previous): nil when there is none. The dev server's internal
// key must also be one of its region.
func previousCredentials(path string, region voiceops.Region) (*Credentials, error) {
	c, err := demoseed.Previous(path, region)
	if err != nil || c == nil {
		return c, err
	}
	if p, err := keys.Parse(c.InternalKey); err != nil || p.Kind != keys.KindInternal || p.Region != region {
		return nil, fmt.Errorf("%s: internal_key is not an internal key of region %q (start with -fresh for new keys)", path, region)
	}
	return c, nil
}
