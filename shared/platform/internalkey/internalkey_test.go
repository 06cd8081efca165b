package internalkey

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/platform/keys"
)

// fakeSecrets answers GetSecretValue from a map of secret IDs.
type fakeSecrets struct {
	values map[string]*string
	err    error
	calls  int
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.values[aws.ToString(in.SecretId)]
	if !ok {
		return nil, errors.New("ResourceNotFoundException")
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: v}, nil
}

func TestDigest(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:voiceops-us/internal-metric-key-AbCdEf"
	f := &fakeSecrets{values: map[string]*string{
		arn:     aws.String("s3cretKeyValue0123456789\n"),
		"empty": aws.String("  "),
		"none":  nil,
	}}
	got, err := Digest(t.Context(), f, arn)
	if err != nil || got != keys.Digest("s3cretKeyValue0123456789") {
		t.Errorf("InternalKeyDigest = %q, %v; want the digest of the trimmed key", got, err)
	}
	for _, id := range []string{"", "empty", "none", "missing"} {
		if _, err := Digest(t.Context(), f, id); err == nil {
			t.Errorf("secret %q: no error", id)
		}
	}
	f.err = errors.New("AccessDeniedException")
	if _, err := Digest(t.Context(), f, arn); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("a failing client: %v", err)
	}
}

// TestLazy: nothing is read until the first Digest; a success is kept (one
// read however many requests), a failure is not (the next one tries again).
func TestLazy(t *testing.T) {
	f := &fakeSecrets{values: map[string]*string{"k": aws.String("key")}, err: errors.New("throttled")}
	l := NewLazy(f, "k")
	if f.calls != 0 {
		t.Fatalf("NewLazy read the secret")
	}
	if _, err := l.Digest(t.Context()); err == nil {
		t.Fatal("a failing read: no error")
	}
	f.err = nil
	for range 3 {
		if d, err := l.Digest(t.Context()); err != nil || d != keys.Digest("key") {
			t.Fatalf("Digest = %q, %v", d, err)
		}
	}
	if f.calls != 2 {
		t.Errorf("%d reads, want 2 (the failure, then one kept success)", f.calls)
	}
}
