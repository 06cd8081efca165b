package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/store/memory"
)

// secrets is Secrets Manager in memory: secret values by ID.
type secrets map[string]string

func (s secrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(s[aws.ToString(in.SecretId)])}, nil
}

func (s secrets) PutSecretValue(_ context.Context, in *secretsmanager.PutSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error) {
	s[aws.ToString(in.SecretId)] = aws.ToString(in.SecretString)
	return &secretsmanager.PutSecretValueOutput{}, nil
}

func TestOutboundRateAndTwilio(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	pacer := memory.NewPacer()
	sec := secrets{"voiceops-us/twilio-accounts": `{"_generated":"xyz"}`}
	const token = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	env := map[string]string{}
	opsctl := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, args, func(k string) string { return env[k] }, &out, &stores{accounts: store, agents: store.AgentConfigs(), pacer: pacer, secrets: sec})
		return out.String(), err
	}
	if _, err := opsctl("account", "create", "-name", "Acme", "-id", "acct_acme"); err != nil {
		t.Fatal(err)
	}
	// Rate: 5 a second, then slots 200 ms apart.
	if out, err := opsctl("outbound", "rate", "-account", "acct_acme", "-per-second", "5"); err != nil || !strings.Contains(out, "200ms") {
		t.Fatalf("outbound rate: %q %v", out, err)
	}
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	_, _ = pacer.ReserveSlot(ctx, "acct_acme", t0)
	if s, _ := pacer.ReserveSlot(ctx, "acct_acme", t0); !s.Equal(t0.Add(200 * time.Millisecond)) {
		t.Errorf("second slot +%s, want +200ms", s.Sub(t0))
	}
	for _, args := range [][]string{
		{"outbound", "rate", "-account", "acct_acme", "-per-second", "101"},
		{"outbound", "rate", "-account", "acct_acme"},
		{"outbound", "rate", "-account", "acct_nope", "-per-second", "2"},
	} {
		if _, err := opsctl(args...); err == nil {
			t.Errorf("opsctl %v: no error", args)
		}
	}

	// Twilio: the token comes from the environment only, and is never printed.
	set := []string{"twilio", "set", "-account", "acct_acme", "-sid", "AC0123456789abcdef0123456789abcdef", "-from", "+15005550006"}
	if _, err := opsctl(set...); err == nil || !strings.Contains(err.Error(), "TWILIO_AUTH_TOKEN") {
		t.Errorf("without the token: %v", err)
	}
	env["TWILIO_AUTH_TOKEN"] = token
	out, err := opsctl(set...)
	if err != nil || strings.Contains(out, token) {
		t.Fatalf("twilio set: %q %v", out, err)
	}
	var stored map[string]map[string]string
	if err := json.Unmarshal([]byte(sec["voiceops-us/twilio-accounts"]), &stored); err != nil ||
		stored["acct_acme"]["auth_token"] != token || stored["acct_acme"]["from_number"] != "+15005550006" || len(stored) != 1 {
		t.Errorf("secret %v %v", stored, err)
	}
	out, err = opsctl("twilio", "show", "-account", "acct_acme")
	if err != nil || strings.Contains(out, token) || !strings.Contains(out, "+15005550006") {
		t.Errorf("twilio show: %q %v", out, err)
	}
	for _, bad := range [][]string{
		{"twilio", "set", "-account", "acct_acme", "-sid", "nope", "-from", "+15005550006"},
		{"twilio", "set", "-account", "acct_acme", "-sid", "AC0123456789abcdef0123456789abcdef", "-from", "5005550006"},
		{"twilio", "set", "-account", "acct_nope", "-sid", "AC0123456789abcdef0123456789abcdef", "-from", "+15005550006"},
		{"twilio", "show", "-account", "acct_other"},
	} {
		if out, err := opsctl(bad...); err == nil || strings.Contains(out+err.Error(), token) {
			t.Errorf("opsctl %v: %q %v", bad, out, err)
		}
	}
}
