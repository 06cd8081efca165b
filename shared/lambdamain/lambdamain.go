// Package lambdamain builds, once per cold start, what every API function
// needs from its environment: the AWS clients, the DynamoDB stores and the
// authenticator. The functions' main packages only call it and start the
// runtime.
package lambdamain

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/voiceops"
)

// RegionEnv names the service region (us, uk, eu) the function serves.
const RegionEnv = "SERVICE_REGION"

// AWSConfig loads the SDK configuration (AWS_ENDPOINT_URL is honoured, so
// the same code runs against LocalStack or moto).
func AWSConfig(ctx context.Context) (aws.Config, error) {
	return config.LoadDefaultConfig(ctx)
}

// APIDeps builds the dependencies of the API handlers from the environment.
func APIDeps(ctx context.Context, getenv func(string) string) (api.Deps, error) {
	region, ok := voiceops.LookupRegion(getenv(RegionEnv))
	if !ok {
		return api.Deps{}, fmt.Errorf("%s must be one of us, uk, eu; got %q", RegionEnv, getenv(RegionEnv))
	}
	names := dynamo.TableNamesFromEnv(getenv)
	if names.Config == "" {
		return api.Deps{}, fmt.Errorf("the table names are not set in the environment (CONFIG_TABLE, ...)")
	}
	cfg, err := AWSConfig(ctx)
	if err != nil {
		return api.Deps{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	stores := dynamo.New(dynamodb.NewFromConfig(cfg), names).Stores()
	return api.Deps{
		Stores: stores,
		Auth:   auth.New(stores.Accounts, region.Region, time.Now),
		Now:    time.Now,
		Log:    slog.New(slog.NewJSONHandler(os.Stderr, nil)),
	}, nil
}
