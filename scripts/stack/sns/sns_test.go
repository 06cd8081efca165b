package sns

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/voiceops/opsapi/shared/testsupport/awstest"
)

// A topic, an SQS subscription and a publication reach the queue as SNS's
// envelope, on moto.
func TestPublishReachesSQSSubscription(t *testing.T) {
	cfg, endpoint := awstest.Config(t)
	ctx := context.Background()
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	c := Client{Endpoint: endpoint, Region: "us-east-1"}
	name := fmt.Sprintf("alarms-%d", time.Now().UnixNano())
	arn, err := c.CreateTopic(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if TopicName(arn) != name || Region(arn) != "us-east-1" {
		t.Fatalf("topic ARN %s", arn)
	}
	again, err := c.CreateTopic(ctx, name)
	if err != nil || again != arn {
		t.Fatalf("creating it again: %s %v, want %s", again, err, arn)
	}
	qo, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: qo.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Subscribe(ctx, arn, "sqs", attrs.Attributes["QueueArn"], nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(ctx, arn, "ALARM: x", `{"AlarmName":"x"}`); err != nil {
		t.Fatal(err)
	}
	out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qo.QueueUrl, WaitTimeSeconds: 2})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("received %v %v, want the publication", out, err)
	}
	var env struct{ Type, TopicArn, Subject, Message string }
	if err := json.Unmarshal([]byte(aws.ToString(out.Messages[0].Body)), &env); err != nil {
		t.Fatal(err)
	}
	if env.Type != "Notification" || env.TopicArn != arn || env.Subject != "ALARM: x" || env.Message != `{"AlarmName":"x"}` {
		t.Errorf("envelope %+v", env)
	}
	if err := c.Publish(ctx, arn[:len(arn)-1]+"nope", "", "x"); err == nil {
		t.Error("publishing to no topic succeeded")
	}
}
