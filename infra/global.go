package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// GlobalConfig is the VoiceOps-global stack: the unprefixed address, which
// answers every request with 421 and names the regional addresses
// (DECISIONS.md, "Regions and hosts"). It holds no data.
type GlobalConfig struct {
	Account        string
	AWSRegion      string
	Domain         string // optional custom domain
	CertificateArn string
	Throttle       Throttle
	Message        string
}

// misdirectedHandler is the whole function: a few lines of inline Node.js, so
// that the stack needs no bundle and no build.
const misdirectedHandler = `exports.handler = async (event) => ({
  statusCode: 421,
  headers: {
    "content-type": "application/json",
    "x-request-id": (event.requestContext && event.requestContext.requestId) || "",
  },
  body: JSON.stringify({ message: process.env.MESSAGE }),
});
`

// NewGlobalStack builds the VoiceOps-global stack.
func NewGlobalStack(scope constructs.Construct, cfg GlobalConfig) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String("VoiceOps-global"), &awscdk.StackProps{
		Env:         env(cfg.Account, cfg.AWSRegion),
		Description: jsii.String("VoiceOps unprefixed address: 421 with the regional addresses"),
	})
	awscdk.Tags_Of(stack).Add(jsii.String("project"), jsii.String("voiceops"), nil)

	fn := awslambda.NewFunction(stack, jsii.String("Misdirected"), &awslambda.FunctionProps{
		Description:  jsii.String("Answers 421: use a regional address"),
		Runtime:      awslambda.Runtime_NODEJS_22_X(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("index.handler"),
		Code:         awslambda.Code_FromInline(jsii.String(misdirectedHandler)),
		MemorySize:   jsii.Number(128),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(3)),
		Environment:  &map[string]*string{"MESSAGE": jsii.String(cfg.Message)},
		LogGroup: awslogs.NewLogGroup(stack, jsii.String("MisdirectedLogs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		}),
	})
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
	awscdk.NewCfnOutput(stack, jsii.String("GlobalApiUrl"), &awscdk.CfnOutputProps{
		Description: jsii.String("URL of the unprefixed address (always 421)"),
		Value:       stage.Url(),
	})
	return stack
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
