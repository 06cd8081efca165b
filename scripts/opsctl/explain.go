package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/voiceops/opsapi/shared/store/dynamo"
)

// awsTarget is where opsctl writes, to say so when AWS refuses.
type awsTarget struct {
	on           bool // false in tests, which use in-memory stores
	prefix       string
	names        dynamo.TableNames
	endpoint     string // AWS_ENDPOINT_URL
	twilioSecret string
}

// explain turns the AWS errors an operator meets into what is missing and
// which flag or variable would fix it. Other errors are returned as they are.
func (t awsTarget) explain(err error) error {
	if err == nil || !t.on {
		return err
	}
	where := "in the AWS account and region of your credentials (AWS_REGION, AWS_PROFILE)"
	if t.endpoint != "" {
		where = "at AWS_ENDPOINT_URL=" + t.endpoint
	}
	var apiErr smithy.APIError
	msg := err.Error()
	switch {
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "ResourceNotFoundException" && strings.Contains(msg, "Secrets Manager"):
		return fmt.Errorf("the secret %s does not exist %s: deploy the stack of this -region, or give -twilio-secret (%w)", t.twilioSecret, where, err)
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "ResourceNotFoundException":
		hint := "check -region and -table-prefix (the CDK stack's tables are voiceops-<region>-*)"
		if t.prefix != "voiceops-local" {
			hint = "for the dev server's tables (dev server and opsctl both with AWS_ENDPOINT_URL), add -table-prefix voiceops-local; for the in-memory dev server, -credentials creds.json instead; for a deployed stack, check -region and your AWS account"
		}
		return fmt.Errorf("a table of %s-* (%s, %s, ...) does not exist %s: %s (%w)", t.prefix, t.names.Config, t.names.Requests, where, hint, err)
	case isMissingCredentials(err):
		return fmt.Errorf("no AWS credentials: opsctl writes to DynamoDB directly, so set AWS_PROFILE or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "+
			"(for moto or LocalStack any values, e.g. test/test, with AWS_ENDPOINT_URL). For the in-memory dev server, which has no tables, "+
			"give its credentials file instead: opsctl -credentials creds.json ...; for the dev server on moto (started with AWS_ENDPOINT_URL), "+
			"the same AWS_ENDPOINT_URL and -table-prefix voiceops-local (%w)", err)
	case strings.Contains(msg, "connection refused") && t.endpoint != "":
		return fmt.Errorf("nothing answers at AWS_ENDPOINT_URL=%s: start moto_server or LocalStack there, or unset it for AWS (%w)", t.endpoint, err)
	case strings.Contains(msg, "Missing Region") || strings.Contains(msg, "could not find region"):
		return fmt.Errorf("no AWS region: set AWS_REGION (e.g. us-east-1 for -region us) (%w)", err)
	}
	return err
}

func isMissingCredentials(err error) bool {
	if errors.Is(err, errNoCredentials) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "failed to retrieve credentials") ||
		strings.Contains(msg, "no EC2 IMDS role found") ||
		strings.Contains(msg, "static credentials are empty") ||
		strings.Contains(msg, "get credentials")
}
