package main

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/voiceops/opsapi/shared/platform/httpapi"
	"github.com/voiceops/opsapi/shared/platform/lambdamain"
)

// httpAPI is one host's HTTP API and its $default stage.
type httpAPI struct {
	api   awsapigatewayv2.HttpApi
	stage awsapigatewayv2.HttpStage
}

// newAPIs creates one HTTP API per host with a throttled, auto-deployed
// $default stage, an optional custom domain, and the routes of every
// function that serves that host (one Lambda integration per function and
// host).
//
// A host that no function serves yet gets no API: API Gateway refuses to
// deploy an API without routes ("Unable to deploy API because no routes
// exist in this API"). Its API appears with its first route.
func newAPIs(stack awscdk.Stack, cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function) map[Host]httpAPI {
	out := map[Host]httpAPI{}
	for _, host := range servedHosts(fns) {
		id := constructID(string(host))
		props := &awsapigatewayv2.HttpApiProps{
			ApiName:            jsii.String(cfg.prefix() + "-" + string(host)),
			Description:        jsii.String(fmt.Sprintf("VoiceOps %s host (%s)", host, cfg.Region.Name)),
			CreateDefaultStage: jsii.Bool(false),
		}
		if host == BaseHost {
			props.CorsPreflight = baseCORS() // the console's calls (console.go)
		}
		api := awsapigatewayv2.NewHttpApi(stack, jsii.String(id+"Api"), props)
		stageProps := &awsapigatewayv2.HttpStageProps{
			HttpApi:    api,
			StageName:  jsii.String("$default"),
			AutoDeploy: jsii.Bool(true),
			Throttle: &awsapigatewayv2.ThrottleSettings{
				RateLimit:  jsii.Number(cfg.Throttle.RateLimit),
				BurstLimit: jsii.Number(cfg.Throttle.BurstLimit),
			},
		}
		if domain := cfg.Domains[host]; domain != "" {
			dn := awsapigatewayv2.NewDomainName(stack, jsii.String(id+"Domain"), &awsapigatewayv2.DomainNameProps{
				DomainName: jsii.String(domain),
				Certificate: awscertificatemanager.Certificate_FromCertificateArn(
					stack, jsii.String(id+"Certificate"), jsii.String(cfg.CertificateArn)),
			})
			stageProps.DomainMapping = &awsapigatewayv2.DomainMappingOptions{DomainName: dn}
			awscdk.NewCfnOutput(stack, jsii.String(id+"DomainTarget"), &awscdk.CfnOutputProps{
				Description: jsii.String("DNS: point " + domain + " (CNAME or alias) at this name"),
				Value:       dn.RegionalDomainName(),
			})
			awscdk.NewCfnOutput(stack, jsii.String(id+"DomainUrl"), &awscdk.CfnOutputProps{
				Description: jsii.String("Custom domain URL of the " + string(host) + " host"),
				Value:       jsii.String("https://" + domain + "/"),
			})
		}
		stage := awsapigatewayv2.NewHttpStage(stack, jsii.String(id+"Stage"), stageProps)
		awscdk.NewCfnOutput(stack, jsii.String(id+"ApiUrl"), &awscdk.CfnOutputProps{
			Description: jsii.String("URL of the " + string(host) + " host API"),
			Value:       stage.Url(),
		})
		out[host] = httpAPI{api: api, stage: stage}
	}

	for host, a := range out {
		// The error shape of the host's own 404s (the $default route's
		// function reads it from the event).
		a.stage.Node().DefaultChild().(awscdk.CfnResource).AddPropertyOverride(jsii.String("StageVariables"),
			map[string]any{httpapi.FamilyStageVariable: hostFamily[host].String()})
	}
	routeSettings := map[Host]map[string]any{}
	for _, f := range fns {
		if f.DefaultRoute {
			// Requests no route matches reach this function, not API
			// Gateway's own {"message":"Not Found"}: the service's JSON
			// 404, with X-Request-Id.
			for _, host := range servedHosts(fns) {
				rt := awsapigatewayv2.NewHttpRoute(stack, jsii.String(constructID(string(host))+"DefaultRoute"), &awsapigatewayv2.HttpRouteProps{
					HttpApi:  out[host].api,
					RouteKey: awsapigatewayv2.HttpRouteKey_DEFAULT(),
					Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(
						jsii.String(constructID(f.Name)+constructID(string(host))+"Integration"), lambdas[f.Name], nil),
				})
				if f.Throttle != nil {
					// Any path, any caller: a flood of unknown paths meets
					// this ceiling before the function's reservation.
					setRouteThrottle(routeSettings, host, "$default", *f.Throttle)
					out[host].stage.Node().AddDependency(rt)
				}
			}
		}
		integrations := map[Host]awsapigatewayv2integrations.HttpLambdaIntegration{}
		for _, r := range f.Routes {
			in, ok := integrations[r.Host]
			if !ok {
				in = awsapigatewayv2integrations.NewHttpLambdaIntegration(
					jsii.String(constructID(f.Name)+"Integration"), lambdas[f.Name], nil)
				integrations[r.Host] = in
			}
			routes := out[r.Host].api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(r.Path),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod(r.Method)},
				Integration: in,
			})
			if f.Throttle == nil {
				continue
			}
			setRouteThrottle(routeSettings, r.Host, r.Method+" "+r.Path, *f.Throttle)
			// API Gateway refuses settings for a route that does not exist
			// yet: the stage waits for its routes.
			for _, rt := range *routes {
				out[r.Host].stage.Node().AddDependency(rt)
			}
		}
	}
	for host, settings := range routeSettings {
		cfn := out[host].stage.Node().DefaultChild().(awscdk.CfnResource)
		cfn.AddPropertyOverride(jsii.String("RouteSettings"), settings)
	}
	return out
}

// setRouteThrottle sets a route's throttle in a stage's RouteSettings.
func setRouteThrottle(settings map[Host]map[string]any, host Host, routeKey string, t Throttle) {
	if settings[host] == nil {
		settings[host] = map[string]any{}
	}
	settings[host][routeKey] = map[string]any{
		"ThrottlingRateLimit":  t.RateLimit,
		"ThrottlingBurstLimit": t.BurstLimit,
	}
}

// hostFamily is the error shape of each host (docs/api.md, "Errors: the two shapes").
var hostFamily = map[Host]httpapi.Family{StudioHost: httpapi.StudioErrors, BaseHost: httpapi.BaseErrors}

// servedHosts lists the hosts that at least one function has a route on, in
// the order of Hosts.
func servedHosts(fns []Function) []Host {
	var out []Host
	for _, h := range Hosts {
		for _, f := range fns {
			if slices.ContainsFunc(f.Routes, func(r Route) bool { return r.Host == h }) {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// baseURLEnv sets the environment variable env, on the functions whose
// environment names it, to the base host's URL: its custom domain, else
// its HTTP API's endpoint. Two use it: PUBLIC_BASE_URL, the URL Twilio
// calls back (it signs that URL, so it must be the one it calls), and
// CONSOLE_BASE_URL, where the console served on the studio host reaches
// the base API. The base API references neither the studio API nor its
// functions, so this adds no cycle.
func baseURLEnv(env string, cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function, apis map[Host]httpAPI) {
	url := jsii.String("https://" + cfg.Domains[BaseHost])
	if cfg.Domains[BaseHost] == "" {
		api, ok := apis[BaseHost]
		if !ok {
			return
		}
		url = api.api.ApiEndpoint()
	}
	for _, f := range fns {
		if slices.Contains(lambdamain.Names(envOf(f)), env) {
			lambdas[f.Name].AddEnvironment(jsii.String(env), url, nil)
		}
	}
}

// consoleURLEnv sets CONSOLE_URL, on the functions whose environment names
// it, to the console on the studio host: its custom domain, else its HTTP
// API's endpoint, and /console/. The studio API references only its own
// routes' functions, none of which reads it, so this adds no cycle.
func consoleURLEnv(cfg StackConfig, fns []Function, lambdas map[string]awslambda.Function, apis map[Host]httpAPI) {
	url := jsii.String("https://" + cfg.Domains[StudioHost] + "/console/")
	if cfg.Domains[StudioHost] == "" {
		api, ok := apis[StudioHost]
		if !ok {
			return
		}
		url = awscdk.Fn_Join(jsii.String(""), &[]*string{api.api.ApiEndpoint(), jsii.String("/console/")})
	}
	for _, f := range fns {
		if slices.Contains(lambdamain.Names(envOf(f)), lambdamain.ConsoleURLEnv) {
			lambdas[f.Name].AddEnvironment(jsii.String(lambdamain.ConsoleURLEnv), url, nil)
		}
	}
}
