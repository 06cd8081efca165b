package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// addSchedules runs every function with a period (Every) on an EventBridge
// rule: one rule per period, named after its first function, with each
// function of that period as a target (the idle sweeper rides on the
// evaluator's rule). A missed or failed tick is not retried: the next one
// redoes the work (the evaluator reads the state it left and repairs it;
// the sweeper finds what is still due).
func addSchedules(stack awscdk.Stack, fns []Function, lambdas map[string]awslambda.Function) {
	byPeriod := map[time.Duration][]Function{}
	var periods []time.Duration
	for _, f := range fns {
		if f.Every == 0 {
			continue
		}
		if byPeriod[f.Every] == nil {
			periods = append(periods, f.Every)
		}
		byPeriod[f.Every] = append(byPeriod[f.Every], f)
	}
	for _, every := range periods {
		group := byPeriod[every]
		var names []string
		var targets []awsevents.IRuleTarget
		for _, f := range group {
			names = append(names, f.Name)
			targets = append(targets, awseventstargets.NewLambdaFunction(lambdas[f.Name], &awseventstargets.LambdaFunctionProps{
				RetryAttempts: jsii.Number(0),
				MaxEventAge:   seconds(f.Every),
			}))
		}
		awsevents.NewRule(stack, jsii.String(constructID(group[0].Name)+"Schedule"), &awsevents.RuleProps{
			Description: jsii.String(fmt.Sprintf("Runs %s every %s", strings.Join(names, " and "), every)),
			Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Minutes(jsii.Number(every.Minutes()))),
			Targets:     &targets,
		})
	}
}
