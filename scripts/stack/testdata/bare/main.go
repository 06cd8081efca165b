// Command bare is the baseline of the per-route latency measurement
// (TestRouteLatency): a Lambda function behind the runner's API Gateway
// that makes one DynamoDB GetItem on the config table, with the AWS
// configuration the stack's functions use, and answers 200. A route's
// latency over the bare function's is the route's own work and round
// trips, the runner's overhead taken out.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/voiceops/opsapi/shared/platform/lambdamain"
	"github.com/voiceops/opsapi/shared/platform/tables"
)

func main() {
	cfg, err := lambdamain.AWSConfig(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	table := os.Getenv(tables.Config.EnvVar)
	if table == "" {
		fmt.Fprintf(os.Stderr, "%s is not set\n", tables.Config.EnvVar)
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg)
	key := map[string]types.AttributeValue{
		tables.Config.PartitionKey: &types.AttributeValueMemberS{Value: "BARE"},
		tables.Config.SortKey:      &types.AttributeValueMemberS{Value: "BARE"},
	}
	lambda.Start(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: key})
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"},
			Body: fmt.Sprintf(`{"found":%t}`, out.Item != nil)}, nil
	})
}
