package twilio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/voiceops/opsapi/shared/voiceops"
)

// The accounts' Twilio credentials live in one Secrets Manager secret per
// region (the stack's <prefix>/twilio-accounts), a JSON object by account
// ID (keys starting with "_" are ignored: the stack's generated value):
//
//	{"acct_acme": {"account_sid": "AC...", "auth_token": "...", "from_number": "+1..."}}
//
// The functions that need it get read access through the stack's Grant;
// the operator writes it with opsctl twilio set.

// SecretsClient is the Secrets Manager calls of this package.
type SecretsClient interface {
	GetSecretValue(ctx context.Context, params *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretsWriter adds the write opsctl makes.
type SecretsWriter interface {
	SecretsClient
	PutSecretValue(ctx context.Context, params *secretsmanager.PutSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error)
}

var _ SecretsWriter = (*secretsmanager.Client)(nil)

// SecretCredentials reads the secret, at most once per TTL (default a
// minute): credentials the operator changes take effect within it. An
// account the cached copy lacks is looked up again once that copy is
// MissTTL old (default 5 s), so an account the operator has just set up
// can call within seconds, and a caller asking for an unknown account
// reads the secret at most once per MissTTL.
type SecretCredentials struct {
	Client   SecretsClient
	SecretID string
	TTL      time.Duration
	MissTTL  time.Duration
	Now      func() time.Time

	mu      sync.Mutex
	cached  map[string]Account
	read    time.Time
	expires time.Time
}

var _ Credentials = (*SecretCredentials)(nil)

// Twilio returns the account's Twilio account.
func (s *SecretCredentials) Twilio(ctx context.Context, accountID string) (Account, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.Now()
	_, known := s.cached[accountID]
	missTTL := s.MissTTL
	if missTTL == 0 {
		missTTL = 5 * time.Second
	}
	if s.cached == nil || !now.Before(s.expires) || (!known && !now.Before(s.read.Add(missTTL))) {
		m, err := read(ctx, s.Client, s.SecretID)
		if err != nil {
			return Account{}, err
		}
		ttl := s.TTL
		if ttl == 0 {
			ttl = time.Minute
		}
		s.cached, s.read, s.expires = m, now, now.Add(ttl)
	}
	a, ok := s.cached[accountID]
	if !ok || a.AccountSID == "" || a.AuthToken == "" || a.FromNumber == "" {
		return Account{}, voiceops.ErrNotFound
	}
	return a, nil
}

func read(ctx context.Context, c SecretsClient, id string) (map[string]Account, error) {
	out, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return map[string]Account{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("twilio: reading the credentials secret: %w", err)
	}
	var raw map[string]json.RawMessage
	if s := aws.ToString(out.SecretString); s != "" {
		// The errors never quote the secret.
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return nil, errors.New("twilio: the credentials secret is not a JSON object")
		}
	}
	m := make(map[string]Account, len(raw))
	for k, v := range raw {
		if strings.HasPrefix(k, "_") {
			continue // the stack's generated first value: no account
		}
		var a Account
		if err := json.Unmarshal(v, &a); err != nil {
			return nil, fmt.Errorf("twilio: the credentials secret's entry %q is not an account object", k)
		}
		m[k] = a
	}
	return m, nil
}

// SetAccount writes an account's Twilio account into the secret (the
// secret must exist: the stack creates it), keeping the other accounts'.
func SetAccount(ctx context.Context, c SecretsWriter, secretID, accountID string, a Account) error {
	if !voiceops.ValidE164(a.FromNumber) {
		return fmt.Errorf("from number %q is not E.164 (+ and 2 to 15 digits)", a.FromNumber)
	}
	if len(a.AccountSID) != 34 || a.AccountSID[:2] != "AC" || a.AuthToken == "" {
		return errors.New("want a Twilio account SID (AC + 32 characters) and its auth token")
	}
	m, err := read(ctx, c, secretID)
	if err != nil {
		return err
	}
	m[accountID] = a
	// The generated "_" keys are dropped: the secret holds accounts only.
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if _, err := c.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(secretID), SecretString: aws.String(string(b))}); err != nil {
		return fmt.Errorf("twilio: writing the credentials secret: %w", err)
	}
	return nil
}
