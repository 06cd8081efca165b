package twilio

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/voiceops"
)

type countingSecret struct {
	value string
	reads int
}

func (c *countingSecret) GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	c.reads++
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(c.value)}, nil
}

// TestSecretCredentialsSeeANewAccountWithinSeconds: a known account is
// read from the cached copy for its TTL; an account the copy lacks is
// looked up again once the copy is MissTTL old, and no more often.
func TestSecretCredentialsSeeANewAccountWithinSeconds(t *testing.T) {
	const a = `{"account_sid":"AC00000000000000000000000000000001","auth_token":"t","from_number":"+14155550123"}`
	secret := &countingSecret{value: `{"acct_a":` + a + `}`}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	s := &SecretCredentials{Client: secret, SecretID: "twilio", Now: func() time.Time { return now }}
	ctx := context.Background()
	if _, err := s.Twilio(ctx, "acct_a"); err != nil || secret.reads != 1 {
		t.Fatalf("acct_a: %v after %d reads", err, secret.reads)
	}
	secret.value = `{"acct_a":` + a + `,"acct_b":` + a + `}` // the operator sets up acct_b
	now = now.Add(time.Second)
	if _, err := s.Twilio(ctx, "acct_b"); !errors.Is(err, voiceops.ErrNotFound) || secret.reads != 1 {
		t.Fatalf("acct_b within MissTTL: %v after %d reads, want not found from the cached copy", err, secret.reads)
	}
	now = now.Add(5 * time.Second)
	if _, err := s.Twilio(ctx, "acct_b"); err != nil || secret.reads != 2 {
		t.Fatalf("acct_b after MissTTL: %v after %d reads, want found after a second read", err, secret.reads)
	}
	for range 3 {
		now = now.Add(10 * time.Second)
		if _, err := s.Twilio(ctx, "acct_c"); !errors.Is(err, voiceops.ErrNotFound) {
			t.Fatalf("acct_c: %v", err)
		}
		if _, err := s.Twilio(ctx, "acct_c"); !errors.Is(err, voiceops.ErrNotFound) {
			t.Fatalf("acct_c again: %v", err)
		}
	}
	if secret.reads != 5 {
		t.Errorf("%d reads, want 5: an unknown account rereads at most once per MissTTL", secret.reads)
	}
	if _, err := s.Twilio(ctx, "acct_a"); err != nil || secret.reads != 5 {
		t.Errorf("acct_a: %v after %d reads, want the cached copy", err, secret.reads)
	}
}
