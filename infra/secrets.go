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

// newTwilioSecret creates the secret of the accounts' Twilio credentials
// and caller IDs (shared/calls/telephony/twilio): a JSON object by account ID.
// Secrets Manager generates its first value, {"_generated": "<random>"}
// (keys starting with "_" are no account), so that the template never holds
// a secret value. The operator fills it with opsctl twilio set; the dialer
// and the calls function read it.
func newTwilioSecret(stack awscdk.Stack, cfg StackConfig) awssecretsmanager.Secret {
	s := awssecretsmanager.NewSecret(stack, jsii.String("TwilioAccounts"), &awssecretsmanager.SecretProps{
		SecretName:  jsii.String(cfg.prefix() + "/twilio-accounts"),
		Description: jsii.String("Twilio credentials and caller IDs of the accounts, by account ID (" + cfg.Region.Name + ")"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			SecretStringTemplate: jsii.String("{}"),
			GenerateStringKey:    jsii.String("_generated"),
			ExcludePunctuation:   jsii.Bool(true),
		},
		RemovalPolicy: cfg.removalPolicy(),
	})
	awscdk.NewCfnOutput(stack, jsii.String("TwilioSecretArn"), &awscdk.CfnOutputProps{
		Description: jsii.String("Secrets Manager ARN of the accounts' Twilio credentials (opsctl twilio set)"),
		Value:       s.SecretArn(),
	})
	return s
}
