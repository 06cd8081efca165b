//go:build stack

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/voiceops/opsapi/shared/calls/callstest/twiliofake"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// devServerLine is a walkthrough line that starts, stops or waits for
// the dev server: on the stack the runner is that server, so these lines
// are the only ones left out (with the URLs, what "unchanged except for
// URLs" allows).
var devServerLine = regexp.MustCompile(`^(kill \$DEV|bin/dev |DEV=\$!|scripts/waitfor -pid \$DEV )`)

// walkthroughBlock returns the commands of the sh block of a page that
// starts with the line first, without the dev server's lines and the
// outputs the page shows (#> lines; the block's own checks, jq -e and
// the waits, still fail it).
func walkthroughBlock(t *testing.T, page, first string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", page))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sh\n"+first)
	if !ok {
		t.Fatalf("%s has no sh block starting %q", page, first)
	}
	block, _, _ := strings.Cut(first+rest, "\n```")
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if devServerLine.MatchString(l) || strings.HasPrefix(strings.TrimSpace(l), "#>") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// The walkthroughs of the docs, run on the stack with its credentials
// file: the alert with the receiver's retry (getting-started.md) and an
// outbound call (outbound-calls.md). The idle end of conversations.md
// restarts the dev server with -conversation-idle-timeout, a dev server
// flag; on the stack the bound is the project's agent configuration
// (TestChatEndsIdleBySweeper).
func TestWalkthroughsOnTheStack(t *testing.T) {
	dir := t.TempDir()
	if err := writeCredentials(st.Credentials, filepath.Join(dir, "creds.json"), nil); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin")+"/", "./scripts/receiver")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the receiver: %v\n%s", err, out)
	}
	if err := os.Symlink(filepath.Join(root, "scripts"), filepath.Join(dir, "scripts")); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	acct := st.Credentials.Accounts[0]
	key := map[string]string{"x-api-key": acct.APIKey}
	// The scenarios' Twilio is the test's; here it plays calls as the
	// runner's -telephony standin does, with its account.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, f := range st.Topology.Functions {
		if id := f.Env[lambdamain.TwilioSecretEnv]; id != "" {
			if err := setStandInAccounts(ctx, secretsmanager.NewFromConfig(st.AWS), id, []string{acct.AccountID}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	twilioStandIn.set((&twiliofake.API{Placed: func(created url.Values) { playStandIn(ctx, created, slog.Default()) }}).ServeHTTP)
	t.Cleanup(func() { twilioStandIn.set(nil) })
	t.Cleanup(func() { // the endpoint and rule the walkthrough leaves
		for _, path := range []string{"/v1/webhook-endpoints", "/v1/alert-rules"} {
			var list struct{ Data []struct{ ID string } }
			call(t, "GET", st.Credentials.AgentStudioURL+path, key, nil, &list)
			for _, x := range list.Data {
				call(t, "DELETE", st.Credentials.AgentStudioURL+path+"/"+x.ID, key, nil, nil)
			}
		}
	})
	script := "set -euo pipefail\n" +
		strings.ReplaceAll(walkthroughBlock(t, "docs/getting-started.md", "kill $DEV; wait $DEV          # stop the first server"), "127.0.0.1:9000", "127.0.0.1:"+port) +
		walkthroughBlock(t, "docs/outbound-calls.md", "BASE=$(jq -r .base_url creds.json)") +
		`echo "outbound: $(curl -s "$BASE/v1/outbound-calling/$SID/status" -H "X-Service-Auth-Token: $SKEY" | jq -r .status)"` + "\n"
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthroughs failed on the stack: %v\n%s", err, out)
	}
	log, err := os.ReadFile(filepath.Join(dir, "receiver.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"answering 500 to see a retry", `(both signatures): {"event_type":"alerts.triggered"`, `(both signatures): {"event_type":"alerts.resolved"`} {
		if !strings.Contains(string(log), want) {
			t.Errorf("receiver.log lacks %q:\n%s", want, log)
		}
	}
	if !strings.Contains(string(out), "outbound: success") {
		t.Errorf("the outbound call did not end in success:\n%s", out)
	}
}
