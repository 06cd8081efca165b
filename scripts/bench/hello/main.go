// Command hello is the baseline of scripts/bench: the smallest aws-lambda-go
// function, built with the flags of the project's functions. Every
// function's bootstrap size, package init and start are compared with it.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, map[string]any) (string, error) { return "hello", nil })
}
