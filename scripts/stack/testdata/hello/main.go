// Command hello is the baseline of the cold-start measurement: a Lambda
// function that does nothing, built and run under the RIE like the stack's.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(_ context.Context, _ json.RawMessage) (string, error) { return "hello", nil })
}
