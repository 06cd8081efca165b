package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// Without credentials, the error says which ones, and that the in-memory
// dev server has no tables.
func TestMissingCredentialsNameTheFix(t *testing.T) {
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:1",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	} {
		t.Setenv(k, v)
	}
	err := run(context.Background(), []string{"account", "list"}, os.Getenv, &bytes.Buffer{}, nil)
	if err == nil {
		t.Fatal("no error without credentials")
	}
	for _, want := range []string{"no AWS credentials", "AWS_ACCESS_KEY_ID", "-table-prefix voiceops-local", "-credentials creds.json"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}

// A missing table is named, with the flag that reaches the dev server's.
func TestMissingTableNamesTheTableAndTheFlag(t *testing.T) {
	_, endpoint := awstest.Config(t)
	t.Setenv("AWS_ENDPOINT_URL", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	err := run(context.Background(), []string{"-table-prefix", "opsctl-missing", "account", "list"}, os.Getenv, &bytes.Buffer{}, nil)
	if err == nil {
		t.Fatal("no error for a missing table")
	}
	for _, want := range []string{"opsctl-missing-config", "does not exist at AWS_ENDPOINT_URL=" + endpoint, "-table-prefix voiceops-local"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	err = run(context.Background(), []string{"account", "list"}, os.Getenv, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "nothing answers at AWS_ENDPOINT_URL=http://127.0.0.1:1") {
		t.Errorf("an endpoint that does not answer: %v", err)
	}
}

// The example docs/conversations.md loads is a valid configuration.
func TestTheExampleAgentConfigurationLoads(t *testing.T) {
	c, err := loadAgentConfig(filepath.Join("..", "..", "docs", "examples", "agent.json"), "acct_acme", "proj_ivr")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Variant(""); !ok {
		t.Error("docs/examples/agent.json has no default variant")
	}
}

// TestNoCredentialsNeverReachTheMetadataService: with no credentials and
// nothing said about the instance metadata service, opsctl answers its
// clear error at once and never asks the metadata address (here a local
// stand-in, which counts the requests it gets).
func TestNoCredentialsNeverReachTheMetadataService(t *testing.T) {
	var asked atomic.Int32
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer imds.Close()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_EC2_METADATA_DISABLED": "",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.URL, "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	} {
		t.Setenv(k, v)
	}
	err := run(context.Background(), []string{"account", "list"}, os.Getenv, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "no AWS credentials") {
		t.Errorf("want the missing credentials named: %v", err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the metadata service was asked %d times", n)
	}
}
