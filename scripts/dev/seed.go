package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/voiceops/opsapi/shared/demoseed"
	"github.com/voiceops/opsapi/shared/keys"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// The credentials JSON the dev server writes (docs/getting-started.md, "The dev server"); shared/demoseed seeds it, as for the stack runner.
type (
	Credentials        = demoseed.Credentials
	AccountCredentials = demoseed.AccountCredentials
	ProjectCredentials = demoseed.ProjectCredentials
)

// seed seeds the demo accounts (shared/demoseed), keeping prev's keys, and
// names this server's URL and internal key.
func seed(ctx context.Context, s demoseed.Stores, url, internalKey string, prev *Credentials) (Credentials, error) {
	c, err := demoseed.Seed(ctx, s, prev)
	c.AgentStudioURL, c.BaseURL, c.InternalKey = url, url, internalKey
	return c, err
}

func writeCredentials(c Credentials, path string, stdout io.Writer) error {
	return demoseed.Write(c, path, stdout)
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
