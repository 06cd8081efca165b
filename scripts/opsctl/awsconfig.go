package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
)

// errNoCredentials is AWS credentials that could not be found: explain
// names the fix.
var errNoCredentials = errors.New("get credentials")

// credentialsTimeout bounds finding the credentials (a profile's SSO or
// process source may take a moment; nothing should take longer).
const credentialsTimeout = 10 * time.Second

// awsConfig decides where opsctl talks before any AWS call: the region and
// the credentials are settled here, and a missing one is an error at once.
// The EC2 instance metadata service is off unless
// AWS_EC2_METADATA_DISABLED=false asks for it: opsctl runs on an
// operator's machine, where the SDK's default chain would otherwise try
// 169.254.169.254 (and wait for it) before saying it found nothing.
func awsConfig(ctx context.Context, getenv func(string) string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if getenv("AWS_EC2_METADATA_DISABLED") != "false" {
		opts = append(opts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, err
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("Missing Region")
	}
	if cfg.Credentials == nil {
		return aws.Config{}, errNoCredentials
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return aws.Config{}, fmt.Errorf("%w: %w", errNoCredentials, err)
	}
	return cfg, nil
}
