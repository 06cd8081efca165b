// Command stack runs the synthesized stack on this machine, with no Docker
// and no AWS account: the template's tables, queues and secrets on moto,
// each Lambda function as its real program under the Lambda Runtime
// Interface Emulator, the HTTP APIs with the template's routes, the event
// source mappings and schedules, and an IAM check of every AWS call a
// function makes against its role's policies (docs/local-stack-runner.md).
//
//	go run ./scripts/stack [-region us] [-assembly cdk.out] [-credentials FILE [-fresh]]
//	    [-studio-addr 127.0.0.1:8080] [-base-addr 127.0.0.1:8081]
//	    [-schedule-every 0] [-allow-loopback-webhooks] [-twilio-api-url URL] [-retry-schedule LIST]
//	    [-conversation-idle-timeout DURATION] [-unused-grants] [-cache DIR]
//	    [-alarm-time-scale 1] [-context KEY=VALUE]... [-telephony standin|twilio]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "stack:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	region        string
	assembly      string
	credentials   string
	fresh         bool
	studioAddr    string
	baseAddr      string
	scheduleEvery time.Duration
	unusedGrants  bool
	cache         string
	root          string
	concurrency   int
	allowLoopback bool
	twilioAPIURL  string
	telephony     string
	retrySchedule string
	idleTimeout   time.Duration
	// alarmTimeScale runs the alarms' clock this many times faster than
	// real time (tests: 60 makes a five-minute period pass in five seconds).
	alarmTimeScale float64
	// context is CDK context the synthesis adds (e.g. alarmTopicArn).
	context map[string]string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("stack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.region, "region", "us", "the product region whose stack runs (us, uk or eu)")
	fs.StringVar(&o.assembly, "assembly", "", "read this cloud assembly (e.g. cdk.out) instead of synthesizing the app")
	fs.StringVar(&o.credentials, "credentials", "", "write the demo credentials JSON (the dev server's format) to `FILE` once serving; "+
		"the accounts and keys of an existing FILE are kept")
	fs.BoolVar(&o.fresh, "fresh", false, "with -credentials: make new keys even if FILE holds some (else a restart keeps its accounts and keys)")
	fs.StringVar(&o.studioAddr, "studio-addr", "127.0.0.1:0", "listen address of the studio host's HTTP API")
	fs.StringVar(&o.baseAddr, "base-addr", "127.0.0.1:0", "listen address of the base host's HTTP API")
	fs.DurationVar(&o.scheduleEvery, "schedule-every", 0, "fire the EventBridge schedules this often instead of their rate (tests)")
	fs.BoolVar(&o.unusedGrants, "unused-grants", false, "on exit, list each role grant that no call used")
	fs.StringVar(&o.cache, "cache", "", "where the Lambda RIE is built and kept (default: the user cache directory); each run builds the functions into a temporary directory of its own")
	fs.StringVar(&o.root, "root", ".", "the project's root (functions/, infra/)")
	fs.IntVar(&o.concurrency, "concurrency", 4, "most concurrent invocations (RIE processes) of each function")
	fs.BoolVar(&o.allowLoopback, "allow-loopback-webhooks", false, "let webhook endpoints use loopback http:// URLs (a local receiver); sets "+lambdamain.LocalLoopbackEnv+" on the functions")
	fs.StringVar(&o.telephony, "telephony", telephonyStandIn, "outbound calls' provider: "+telephonyStandIn+" (a local Twilio stand-in the runner starts, "+
		"set as every demo account's Twilio account; the dev server's test numbers) or "+telephonyTwilio+" (the accounts the operator sets, at -twilio-api-url)")
	fs.StringVar(&o.twilioAPIURL, "twilio-api-url", "", "with -telephony "+telephonyTwilio+": Twilio's API base URL for the functions that call Twilio (a local stand-in); sets TWILIO_API_BASE_URL")
	fs.StringVar(&o.retrySchedule, "retry-schedule", "", "delays of the delivery attempts, comma-separated `LIST` (default: the product's); sets "+lambdamain.LocalRetryScheduleEnv)
	fs.DurationVar(&o.idleTimeout, "conversation-idle-timeout", 0, "how long a chat of a project without its own idle timeout may be idle before the sweeper ends it "+
		"(default: the product's, 30m); sets "+lambdamain.LocalChatIdleTimeoutEnv)
	fs.Float64Var(&o.alarmTimeScale, "alarm-time-scale", 1, "evaluate the template's alarms on a clock this many times faster than real time (60: a 5-minute period passes in 5 s)")
	fs.Func("context", "CDK context `KEY=VALUE` for the synthesis (repeatable; e.g. alarmTopicArn=arn:aws:sns:us-east-1:123456789012:alarms)", func(kv string) error {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("want KEY=VALUE")
		}
		if o.context == nil {
			o.context = map[string]string{}
		}
		o.context[k] = v
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.telephony != telephonyStandIn && o.telephony != telephonyTwilio {
		return o, fmt.Errorf("-telephony must be %s or %s", telephonyStandIn, telephonyTwilio)
	}
	if o.telephony == telephonyStandIn && o.twilioAPIURL != "" {
		return o, fmt.Errorf("-twilio-api-url needs -telephony %s", telephonyTwilio)
	}
	if o.alarmTimeScale <= 0 {
		return o, fmt.Errorf("-alarm-time-scale must be positive")
	}
	if o.cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		o.cache = dir + "/voiceops-stack"
	}
	return o, nil
}

// run serves the stack until ctx ends. ready, when not nil, receives the
// running stack once it serves (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- *Stack) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := Start(ctx, o, getenv, log)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := writeCredentials(s.Credentials, o.credentials, stdout); err != nil {
		return err
	}
	log.Info("serving", "agent_studio_url", s.Credentials.AgentStudioURL, "base_url", s.Credentials.BaseURL,
		"aws_endpoint", s.ProxyURL, "bedrock_endpoint", s.BedrockURL, "moto", s.MotoURL, "function_logs", s.LogDir)
	if ready != nil {
		ready <- s
	}
	<-ctx.Done()
	s.Report(stderr, o.unusedGrants)
	return nil
}
