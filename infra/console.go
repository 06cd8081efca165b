package main

import (
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/jsii-runtime-go"
)

// The operators' console (shared/alerts/console) is served by the studio host
// and calls the base host too (conversations, concurrency, handoff
// state): a second origin. The console learns the base host's URL from
// CONSOLE_BASE_URL (its config.json and its CSP's connect-src name it),
// and the base host answers CORS.

// baseCORS is the base host's CORS configuration: API Gateway answers the
// preflight itself (no OPTIONS route) and adds Access-Control-Allow-Origin
// to the functions' responses, ignoring any CORS header they set.
//
// Any origin: the console's origin is the studio API's URL, which the base
// API cannot name (the studio API integrates the alerts function, whose
// environment names the base API: a dependency cycle). That is safe here
// because the base host authenticates with the x-api-key header only,
// never cookies or other ambient credentials (AllowCredentials stays
// off): a page of another origin can call it only with a key it already
// holds, as curl can. GET only: the console only reads the base host.
func baseCORS() *awsapigatewayv2.CorsPreflightOptions {
	return &awsapigatewayv2.CorsPreflightOptions{
		AllowOrigins: jsii.Strings("*"),
		AllowHeaders: jsii.Strings("x-api-key", "content-type"),
		AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{awsapigatewayv2.CorsHttpMethod_GET},
		MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
	}
}

// servesConsole tells whether a function serves the console's routes (and
// so reads CONSOLE_BASE_URL).
func servesConsole(f Function) bool {
	return slices.ContainsFunc(f.Routes, func(r Route) bool { return strings.HasPrefix(r.Path, "/console") })
}
