// Package lambdamain is what every function's main shares: the names of
// the environment variables CDK sets (each defined once; the table names
// are in shared/platform/tables), each function's environment as a struct read and
// checked once at start (env.go), the AWS configuration built straight
// from the Lambda environment, the logger, and main itself (Main). Each functions/<name>
// composes its own graph from these, so it links only what it uses.
package lambdamain

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/voiceops/opsapi/shared/platform/logctx"
	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
)

// The environment variables infra/ sets on the functions.
const (
	// RegionEnv names the service region (us, uk, eu) the function serves.
	RegionEnv = "SERVICE_REGION"
	// QueueEnv carries the delivery queue's URL.
	QueueEnv = "DELIVERY_QUEUE_URL"
	// ShardQueueEnv carries the URL of the evaluator's shard queue: the
	// schedule sends one message per rule shard there.
	ShardQueueEnv = "SHARD_QUEUE_URL"
	// OutboundQueueEnv carries the outbound queue's URL (dial jobs).
	OutboundQueueEnv = "OUTBOUND_QUEUE_URL"
	// TwilioSecretEnv names the Secrets Manager secret holding the
	// accounts' Twilio credentials and caller IDs (opsctl twilio set).
	TwilioSecretEnv = "TWILIO_SECRET"
	// PublicBaseURLEnv is the base host's public URL, which Twilio calls
	// back (status callbacks, the answer URL).
	PublicBaseURLEnv = "PUBLIC_BASE_URL"
	// ConsoleBaseURLEnv is the base host's URL as the operators' console
	// (served by the studio host) calls it: the console's config.json and
	// its CSP's connect-src name it (shared/alerts/console).
	ConsoleBaseURLEnv = "CONSOLE_BASE_URL"
	// ConsoleURLEnv is the operators' console on the studio host
	// (https://<studio host>/console/), which Slack and PagerDuty messages
	// link to.
	ConsoleURLEnv = "CONSOLE_URL"
	// InternalKeyEnv names the Secrets Manager secret (ARN or name) that
	// holds the internal key (infra/secrets.go sets it on the functions
	// that serve internal routes).
	InternalKeyEnv = "INTERNAL_KEY_PARAMETER"
	// LocalLoopbackEnv is set to "true" only by the local stack runner
	// (scripts/stack -allow-loopback-webhooks), never by the template: it
	// lets webhook endpoints be saved with, and deliveries go to, loopback
	// http:// URLs, as the dev server's -allow-loopback-webhooks does.
	LocalLoopbackEnv = "VOICEOPS_LOCAL_ALLOW_LOOPBACK"
	// LocalRetryScheduleEnv, set only by the local stack runner
	// (scripts/stack -retry-schedule), replaces the delivery retry
	// schedule (the dev server's -retry-schedule), so that a run can see a
	// delivery spend its schedule.
	LocalRetryScheduleEnv = "VOICEOPS_LOCAL_RETRY_SCHEDULE"
	// LocalChatIdleTimeoutEnv, set only by the local stack runner
	// (scripts/stack -conversation-idle-timeout), replaces the idle timeout
	// of the chats of projects that configure none (the dev server's
	// -conversation-idle-timeout), so that a run can watch a chat end idle.
	LocalChatIdleTimeoutEnv = "VOICEOPS_LOCAL_CHAT_IDLE_TIMEOUT"
)

// LocalChatIdleTimeout reads LocalChatIdleTimeoutEnv: 0 when it is unset
// (the service's default applies), else a positive duration.
func LocalChatIdleTimeout(getenv func(string) string) (time.Duration, error) {
	v := getenv(LocalChatIdleTimeoutEnv)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: want a positive duration, got %q", LocalChatIdleTimeoutEnv, v)
	}
	return d, nil
}

// Main is a function's main: it calls run with the process's environment,
// and a run that cannot start is logged and exits 1, which Lambda reports
// as the init error. run builds the function's graph and starts the
// runtime; tests call it with their own getenv.
func Main(function string, run func(ctx context.Context, getenv func(string) string) error) {
	if err := run(context.Background(), os.Getenv); err != nil {
		slog.Error(function+": cannot start", "error", err)
		os.Exit(1)
	}
}

// Serve is Main for a function whose handler build composes from the
// environment (the round-trip tests call the same build on moto): the
// Lambda runtime serves what build returns.
func Serve[H any](function string, build func(getenv func(string) string) (H, error)) {
	Main(function, func(ctx context.Context, getenv func(string) string) error {
		h, err := build(getenv)
		if err != nil {
			return err
		}
		lambda.StartWithOptions(h, lambda.WithContext(ctx))
		return nil
	})
}

// AllowLoopback reports whether LocalLoopbackEnv is "true".
func AllowLoopback(getenv func(string) string) bool { return getenv(LocalLoopbackEnv) == "true" }

// AWSConfig builds the SDK configuration from the Lambda environment:
// AWS_REGION and the execution role's credentials in AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; AWS_ENDPOINT_URL, when set,
// points every client at an emulator (LocalStack, moto), and
// AWS_ENDPOINT_URL_<SERVICE> (AWS_ENDPOINT_URL_BEDROCK_RUNTIME) one
// service's client, as the SDK's own loader does. It does not use
// config.LoadDefaultConfig: that links the shared-config, SSO and STS
// machinery (about 2.4 MB and milliseconds of init) that a function never
// needs.
func AWSConfig(getenv func(string) string) (aws.Config, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	if region == "" {
		return aws.Config{}, fmt.Errorf("AWS_REGION is not set")
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	if id == "" || secret == "" {
		return aws.Config{}, fmt.Errorf("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
	}
	cfg := aws.Config{
		Region:      region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN"))),
	}
	if url := getenv("AWS_ENDPOINT_URL"); url != "" {
		cfg.BaseEndpoint = aws.String(url)
	}
	cfg.ConfigSources = append(cfg.ConfigSources, serviceEndpoints(getenv))
	traceSDK(&cfg, getenv)
	return cfg, nil
}

// serviceEndpoints is the config source of the service-specific endpoint
// variables: each client asks it for its service ID ("Bedrock Runtime"
// reads AWS_ENDPOINT_URL_BEDROCK_RUNTIME), as config.EnvConfig answers.
type serviceEndpoints func(string) string

func (e serviceEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	url := e("AWS_ENDPOINT_URL_" + strings.ReplaceAll(strings.ToUpper(sdkID), " ", "_"))
	return url, url != "", nil
}

// Logger is the functions' structured logger (JSON lines for CloudWatch);
// every line carries the IDs of the request it is about (shared/platform/logctx).
func Logger() *slog.Logger { return slog.New(logctx.NewJSON(os.Stderr, nil)) }

// AccessLogger is an HTTP function's logger of its access lines
// (httpapi.Config's AccessLog): lines as Logger's, held for the metrics'
// flush at the invocation's end and written with them to stdout, one write
// where there were two. Lambda sends stdout and stderr alike to the
// function's log stream, a line an event.
func AccessLogger(metrics *emf.Batch) *slog.Logger {
	return slog.New(logctx.NewJSON(metrics.Held(), nil))
}
