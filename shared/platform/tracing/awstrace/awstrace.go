// Package awstrace traces every AWS SDK call of a client as an X-Ray
// subsegment (shared/platform/tracing): the service, operation, region, request ID
// and HTTP status, retries included in its time.
package awstrace

import (
	"context"
	"errors"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/voiceops/opsapi/shared/platform/tracing"
)

// Middleware returns an aws.Config APIOptions entry that traces each
// operation with t; nil when t is nil (tracing off).
func Middleware(t *tracing.Tracer) func(*middleware.Stack) error {
	if t == nil {
		return nil
	}
	return func(st *middleware.Stack) error {
		// After the operation's own initialize steps, which put the
		// service and operation names in the context; before the retry
		// loop, so that the subsegment spans every attempt.
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("VoiceOpsXRay",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				ctx, seg := t.Begin(ctx, awsmiddleware.GetServiceID(ctx), "aws")
				out, md, err := next.HandleInitialize(ctx, in)
				if seg == nil {
					return out, md, err
				}
				fields := map[string]any{
					"operation": awsmiddleware.GetOperationName(ctx),
					"region":    awsmiddleware.GetRegion(ctx),
				}
				if id, ok := awsmiddleware.GetRequestIDMetadata(md); ok {
					fields["request_id"] = id
				}
				status := 0
				if raw, ok := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response); ok && raw != nil {
					status = raw.StatusCode
				}
				var re *smithyhttp.ResponseError
				if errors.As(err, &re) {
					status = re.HTTPStatusCode()
					if id := requestIDOf(err); id != "" {
						fields["request_id"] = id
					}
				}
				seg.SetAWS(fields)
				seg.End(status, err)
				return out, md, err
			}), middleware.After)
	}
}

func requestIDOf(err error) string {
	var re interface{ ServiceRequestID() string }
	if errors.As(err, &re) {
		return re.ServiceRequestID()
	}
	return ""
}
