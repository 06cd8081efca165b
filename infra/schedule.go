package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// addSchedules runs every function with a period (Every) on an EventBridge
// rule. A missed or failed tick is not retried: the next one redoes the work
// (the evaluator reads the state it left and repairs it).
func addSchedules(stack awscdk.Stack, fns []Function, lambdas map[string]awslambda.Function) {
	for _, f := range fns {
		if f.Every == 0 {
			continue
		}
		awsevents.NewRule(stack, jsii.String(constructID(f.Name)+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String(fmt.Sprintf("Runs %s every %s", f.Name, f.Every)),
			Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(f.Every.Minutes()))),
			Targets: &[]awsevents.IRuleTarget{
				awseventstargets.NewLambdaFunction(lambdas[f.Name], &awseventstargets.LambdaFunctionProps{
					RetryAttempts: jsii.Number(0),
					MaxEventAge:   seconds(f.Every),
				}),
			},
		})
	}
}
