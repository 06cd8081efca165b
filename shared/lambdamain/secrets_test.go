package lambdamain

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/keys"
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

func TestInternalKeyDigest(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:voiceops-us/internal-metric-key-AbCdEf"
	f := &fakeSecrets{values: map[string]*string{
		arn:     aws.String("s3cretKeyValue0123456789\n"),
		"empty": aws.String("  "),
		"none":  nil,
	}}
	got, err := InternalKeyDigest(t.Context(), f, arn)
	if err != nil || got != keys.Digest("s3cretKeyValue0123456789") {
		t.Errorf("InternalKeyDigest = %q, %v; want the digest of the trimmed key", got, err)
	}
	for _, id := range []string{"", "empty", "none", "missing"} {
		if _, err := InternalKeyDigest(t.Context(), f, id); err == nil {
			t.Errorf("secret %q: no error", id)
		}
	}
	f.err = errors.New("AccessDeniedException")
	if _, err := InternalKeyDigest(t.Context(), f, arn); err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("a failing client: %v", err)
	}
}

func TestAWSConfigFromTheLambdaEnvironment(t *testing.T) {
	env := map[string]string{"AWS_REGION": "eu-west-2", "AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "tok"}
	cfg, err := AWSConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	creds, err := cfg.Credentials.Retrieve(t.Context())
	if err != nil || cfg.Region != "eu-west-2" || creds.AccessKeyID != "AKIA" || creds.SessionToken != "tok" || cfg.BaseEndpoint != nil {
		t.Fatalf("config %+v, credentials %+v, %v", cfg, creds, err)
	}
	env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:5000"
	if cfg, _ := AWSConfig(func(k string) string { return env[k] }); cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != env["AWS_ENDPOINT_URL"] {
		t.Errorf("endpoint %v", cfg.BaseEndpoint)
	}
	for _, missing := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		e := map[string]string{}
		for k, v := range env {
			if k != missing {
				e[k] = v
			}
		}
		if _, err := AWSConfig(func(k string) string { return e[k] }); err == nil {
			t.Errorf("without %s: no error", missing)
		}
	}
}

func TestRegionAndRequire(t *testing.T) {
	if _, err := Region(func(string) string { return "mars" }); err == nil {
		t.Error("region mars accepted")
	}
	if r, err := Region(func(string) string { return "uk" }); err != nil || r.AWSRegion != "eu-west-2" {
		t.Errorf("uk: %+v %v", r, err)
	}
	env := map[string]string{"A": "1"}
	if _, err := Require(func(k string) string { return env[k] }, "A", "B"); err == nil || !strings.Contains(err.Error(), "B") {
		t.Errorf("missing B: %v", err)
	}
	if v, err := Require(func(k string) string { return env[k] }, "A"); err != nil || v[0] != "1" {
		t.Errorf("A: %v %v", v, err)
	}
}
