package lambdainvoke

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

type fakeClient struct {
	in  *lambda.InvokeInput
	out *lambda.InvokeOutput
	err error
}

func (f *fakeClient) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = in
	return f.out, f.err
}

func TestInvokeLambda(t *testing.T) {
	const arn = "arn:aws:lambda:eu-west-1:123456789012:function:voiceops-fn-on-turn"
	f := &fakeClient{out: &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: []byte(`{}`)}}
	out, err := New(f).InvokeLambda(context.Background(), arn, []byte(`{"hook":"on_turn"}`))
	if err != nil || out.StatusCode != 200 || out.FunctionError != "Unhandled" || string(out.Payload) != `{}` {
		t.Fatalf("%+v %v", out, err)
	}
	if aws.ToString(f.in.FunctionName) != arn || f.in.InvocationType != types.InvocationTypeRequestResponse || string(f.in.Payload) != `{"hook":"on_turn"}` {
		t.Errorf("input %+v", f.in)
	}
	f.err = &types.ResourceNotFoundException{Message: aws.String("not found")}
	_, err = New(f).InvokeLambda(context.Background(), arn, nil)
	var coded interface{ ErrorCode() string }
	if !errors.As(err, &coded) || coded.ErrorCode() != "ResourceNotFoundException" {
		t.Errorf("error %v keeps no code", err)
	}
}
