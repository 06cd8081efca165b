package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"
)

// internalKey is the key that outside producers (telephony, the agent
// runtime) send in X-Internal-Key to POST /internal/v1/metric-events.
type internalKey struct {
	secret awssecretsmanager.Secret
}

// newInternalKey creates the internal key as a Secrets Manager secret whose
// value Secrets Manager generates: the template never holds it. Functions
// receive its ARN in INTERNAL_KEY_PARAMETER and read it at cold start.
// Operators read it with
//
//	aws secretsmanager get-secret-value --secret-id <InternalKeySecretArn>
func newInternalKey(stack awscdk.Stack, cfg StackConfig) internalKey {
	s := awssecretsmanager.NewSecret(stack, jsii.String("InternalKey"), &awssecretsmanager.SecretProps{
		SecretName:  jsii.String(cfg.prefix() + "/internal-metric-key"),
		Description: jsii.String("X-Internal-Key of POST /internal/v1/metric-events (" + cfg.Region.Name + ")"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(48),
			ExcludePunctuation: jsii.Bool(true),
		},
		RemovalPolicy: cfg.removalPolicy(),
	})
	awscdk.NewCfnOutput(stack, jsii.String("InternalKeySecretArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("Secrets Manager ARN of the internal metric-intake key"),
		Value:       s.SecretArn(),
	})
	return internalKey{secret: s}
}
