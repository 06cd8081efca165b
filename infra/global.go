package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// GlobalConfig is the VoiceOps-global stack: the unprefixed address, which
// answers every request with 421 and names the regional addresses
// (docs/api.md, "The two hosts"). It holds no data.
type GlobalConfig struct {
	Account        string
	AWSRegion      string
	Domain         string // optional custom domain
	CertificateArn string
	Throttle       Throttle
	Message        string
	Bundler        *Bundler      // builds the function's code
	Obs            Observability // log retention, tracing, access log
	// DeletionProtection keeps its log groups on delete (context
	// deletionProtection, as the regional stacks').
	DeletionProtection bool
	// Reserved caps the function's concurrency: it shares us-east-1's
	// with VoiceOps-us, whose alerting path a flood of misdirected
	// requests must not starve (docs/capacity.md).
	Reserved int
}

// MisdirectedFunction is the global stack's one function, functions/misdirected:
// it answers every request 421 with Message (in its MESSAGE variable).
const MisdirectedFunction = "misdirected"

// NewGlobalStack builds the VoiceOps-global stack.
func NewGlobalStack(scope constructs.Construct, cfg GlobalConfig) (awscdk.Stack, error) {
	if err := cfg.Bundler.check(MisdirectedFunction); err != nil {
		return nil, err
	}
	stack := awscdk.NewStack(scope, jsii.String("VoiceOps-global"), &awscdk.StackProps{
		Env:         env(cfg.Account, cfg.AWSRegion),
		Description: jsii.String("VoiceOps unprefixed address: 421 with the regional addresses"),
	})
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("voiceops"), nil)

	fn, err := newGoFunction(stack, constructID(MisdirectedFunction), MisdirectedFunction, cfg.Bundler, awslambda.FunctionProps{
		Description: jsii.String("Answers 421: use a regional address"),
		MemorySize:  jsii.Number(128),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(3)),
		Environment: &map[string]*string{"MESSAGE": jsii.String(cfg.Message)},
		// Its 421 takes a few ms: a flood at the stage's throttle stays
		// within a few executions, and this caps it anyway.
		ReservedConcurrentExecutions: reservedConcurrency(cfg.Reserved),
	}, removalPolicy(cfg.DeletionProtection))
	if err != nil {
		return nil, err
	}
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("GlobalApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String("voiceops-global"),
		CreateDefaultStage: jsii.Bool(false),
		DefaultIntegration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("MisdirectedIntegration"), fn, nil),
	})
	stageProps := &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(cfg.Throttle.RateLimit),
			BurstLimit: jsii.Number(cfg.Throttle.BurstLimit),
		},
	}
	if cfg.Domain != "" {
		dn := awsapigatewayv2.NewDomainName(stack, jsii.String("GlobalDomain"), &awsapigatewayv2.DomainNameProps{
			DomainName: jsii.String(cfg.Domain),
			Certificate: awscertificatemanager.Certificate_FromCertificateArn(
				stack, jsii.String("GlobalCertificate"), jsii.String(cfg.CertificateArn)),
		})
		stageProps.DomainMapping = &awsapigatewayv2.DomainMappingOptions{DomainName: dn}
		awscdk.NewCfnOutput(stack, jsii.String("GlobalDomainTarget"), &awscdk.CfnOutputProps{
			Description: jsii.String("DNS: point " + cfg.Domain + " (CNAME or alias) at this name"),
			Value:       dn.RegionalDomainName(),
		})
	}
	stage := awsapigatewayv2.NewHttpStage(stack, jsii.String("GlobalStage"), stageProps)
	observeGlobal(stack, cfg.Obs, fn, stage.Node().DefaultChild().(awscdk.CfnResource), removalPolicy(cfg.DeletionProtection))
	awscdk.NewCfnOutput(stack, jsii.String("GlobalApiUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("URL of the unprefixed address (always 421)"),
		Value:       stage.Url(),
	})
	return stack, nil
}

// globalMessage is the 421 body's message. It names the regional hosts when
// their custom domains are known from context, else the region names.
func globalMessage(c contextReader) string {
	var hosts []string
	for _, r := range Regions {
		for _, key := range []string{"studioDomain", "baseDomain"} {
			if d := strings.ReplaceAll(c.regional(key, r.Name, ""), "{region}", r.Name); d != "" {
				hosts = append(hosts, "https://"+d)
			}
		}
	}
	if len(hosts) == 0 {
		var names []string
		for _, r := range Regions {
			names = append(names, r.Name)
		}
		return fmt.Sprintf("use a regional address: the hosts of region %s", strings.Join(names, ", "))
	}
	return "use a regional address: " + strings.Join(hosts, ", ")
}
