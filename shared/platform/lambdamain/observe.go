package lambdamain

import (
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/voiceops/opsapi/shared/platform/telemetry/emf"
	"github.com/voiceops/opsapi/shared/platform/tracing"
	"github.com/voiceops/opsapi/shared/platform/tracing/awstrace"
)

// Metrics is a function's metrics batch: Embedded Metric Format lines on
// stdout, which CloudWatch Logs turns into metrics. Wrap the handler with
// emf.Flushing so that each invocation writes its own.
func Metrics() *emf.Batch { return emf.New(os.Stdout, time.Now) }

// Tracer is the function's X-Ray tracer, nil when tracing is off (infra's
// "tracing" context key: Lambda sets AWS_XRAY_DAEMON_ADDRESS only with
// active tracing).
func Tracer(getenv func(string) string) *tracing.Tracer { return tracing.FromEnv(getenv) }

// traceSDK makes every client built from cfg trace its calls.
func traceSDK(cfg *aws.Config, getenv func(string) string) {
	if mw := awstrace.Middleware(Tracer(getenv)); mw != nil {
		cfg.APIOptions = append(cfg.APIOptions, mw)
	}
}
