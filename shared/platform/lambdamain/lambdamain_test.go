package lambdamain

import (
	"context"
	"testing"
	"time"
)

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

func TestMainRunsWithTheProcessEnvironment(t *testing.T) {
	t.Setenv("VOICEOPS_MAIN_TEST", "set")
	var got string
	Main("test", func(ctx context.Context, getenv func(string) string) error {
		got = getenv("VOICEOPS_MAIN_TEST")
		return ctx.Err()
	})
	if got != "set" {
		t.Errorf("run read %q from its getenv, want the process's %q", got, "set")
	}
}

func TestLocalChatIdleTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 0, "4s": 4 * time.Second, "90m": 90 * time.Minute} {
		got, err := LocalChatIdleTimeout(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0s", "-1s", "4", "soon"} {
		if _, err := LocalChatIdleTimeout(func(string) string { return v }); err == nil {
			t.Errorf("%q: accepted", v)
		}
	}
}
