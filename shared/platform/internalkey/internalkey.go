// Package internalkey reads the region's internal key (the X-Internal-Key
// of the internal routes) from Secrets Manager, once per environment, on
// the first internal request (Lazy), and keeps only its digest. Only the functions that serve internal routes
// import it (and the Secrets Manager client with it).
package internalkey

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/platform/keys"
)

// SecretsClient is the part of the Secrets Manager client used here.
type SecretsClient interface {
	GetSecretValue(ctx context.Context, params *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ SecretsClient = (*secretsmanager.Client)(nil)

// InternalKeyDigest reads the internal key from the secret secretID and
// returns its hex SHA-256 digest; the key itself is not kept. Surrounding
// whitespace of the secret value is not part of the key.
func Digest(ctx context.Context, c SecretsClient, secretID string) (string, error) {
	if secretID == "" {
		return "", errors.New("the secret holding the internal key is not named")
	}
	out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretID)})
	if err != nil {
		return "", fmt.Errorf("reading the internal key from secret %s: %w", secretID, err)
	}
	key := strings.TrimSpace(aws.ToString(out.SecretString))
	if key == "" {
		return "", errors.New("the internal key secret " + secretID + " has no string value")
	}
	return keys.Digest(key), nil
}

// Lazy reads the digest on first use and keeps it: a cold start serving a
// public request never waits for Secrets Manager. A failed read is not
// kept; the next internal request tries again.
type Lazy struct {
	c        SecretsClient
	secretID string

	mu     sync.Mutex
	digest string
}

// NewLazy returns a Lazy reading secretID through c.
func NewLazy(c SecretsClient, secretID string) *Lazy { return &Lazy{c: c, secretID: secretID} }

// Digest returns the internal key's digest (httpapi.Config.InternalKey).
func (l *Lazy) Digest(ctx context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.digest != "" {
		return l.digest, nil
	}
	d, err := Digest(ctx, l.c, l.secretID)
	if err != nil {
		return "", err
	}
	l.digest = d
	return d, nil
}
