// Package lambdainvoke makes the runner's Lambda calls (hooks.LambdaInvoker)
// with the SDK's Lambda client. It is apart from shared/hooks so that only
// the functions that run project functions link the Lambda service client
// (about 1.8 MB and its schemas' init).
package lambdainvoke

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/voiceops/opsapi/shared/hooks"
)

// Client is the part of the Lambda client used here.
type Client interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ Client = (*lambda.Client)(nil)

// Invoker invokes functions synchronously through c.
type Invoker struct{ c Client }

// New returns an Invoker on c.
func New(c Client) *Invoker { return &Invoker{c: c} }

var _ hooks.LambdaInvoker = (*Invoker)(nil)

// InvokeLambda makes a RequestResponse invoke of the function arn.
func (i *Invoker) InvokeLambda(ctx context.Context, arn string, payload []byte) (hooks.LambdaOutput, error) {
	out, err := i.c.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(arn),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return hooks.LambdaOutput{}, err // the SDK's error carries ErrorCode()
	}
	return hooks.LambdaOutput{StatusCode: int(out.StatusCode), FunctionError: aws.ToString(out.FunctionError), Payload: out.Payload}, nil
}
