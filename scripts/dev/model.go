package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/voiceops/opsapi/shared/conversations/agent"
	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockconverse"
)

// bedrockModel returns the model of Bedrock agents when the SDK's Bedrock
// Runtime endpoint is set (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else
// AWS_ENDPOINT_URL), and that endpoint; nil otherwise, and those agents
// answer with their fallback. The SDK resolves the endpoint itself, as in
// the functions. Without a region or credentials in the environment it
// uses us-east-1 and the keys "local"/"local": the stand-in
// (scripts/bedrock-standin) needs a signed request, not an AWS account.
func bedrockModel(ctx context.Context, getenv func(string) string) (agent.Model, string, error) {
	endpoint := getenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME")
	if endpoint == "" {
		endpoint = getenv("AWS_ENDPOINT_URL")
	}
	if endpoint == "" {
		return nil, "", nil
	}
	var opts []func(*config.LoadOptions) error
	if getenv("AWS_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if getenv("AWS_ACCESS_KEY_ID") == "" && getenv("AWS_PROFILE") == "" {
		opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(localKey, localKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("the Bedrock Runtime client at %s: %w", endpoint, err)
	}
	return bedrockconverse.New(bedrockconverse.NewClient(cfg)), endpoint, nil
}

// localKey is the access key ID and secret the dev server signs with when
// the environment has none.
const localKey = "local"
