// Package sns calls the few actions of SNS's query API the stack runner
// needs on the emulator (create a topic, subscribe to it, publish): the
// alarm topics and their subscriptions, and the alarms' notifications.
// moto routes by the credential scope and checks no signature, so the
// requests carry an unsigned Authorization header, as esm's stream calls
// do.
package sns

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls SNS on the emulator in one region.
type Client struct {
	Endpoint string
	Region   string
	HTTP     *http.Client
}

func (c Client) call(ctx context.Context, form url.Values, out any) error {
	form.Set("Version", "2010-03-31")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=stack-runner/20260101/%s/sns/aws4_request, SignedHeaders=host, Signature=0", c.Region))
	h := c.HTTP
	if h == nil {
		h = http.DefaultClient
	}
	resp, err := h.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sns %s: %s: %s", form.Get("Action"), resp.Status, body)
	}
	if out == nil {
		return nil
	}
	return xml.Unmarshal(body, out)
}

// CreateTopic creates a topic (or finds it: SNS answers the same ARN) and
// returns its ARN.
func (c Client) CreateTopic(ctx context.Context, name string) (string, error) {
	var out struct {
		Arn string `xml:"CreateTopicResult>TopicArn"`
	}
	err := c.call(ctx, url.Values{"Action": {"CreateTopic"}, "Name": {name}}, &out)
	return out.Arn, err
}

// Subscribe subscribes an endpoint (for protocol sqs, a queue ARN) with
// the given subscription attributes (e.g. RawMessageDelivery).
func (c Client) Subscribe(ctx context.Context, topicARN, protocol, endpoint string, attrs map[string]string) (string, error) {
	form := url.Values{"Action": {"Subscribe"}, "TopicArn": {topicARN}, "Protocol": {protocol}, "Endpoint": {endpoint}}
	i := 1
	for k, v := range attrs {
		form.Set(fmt.Sprintf("Attributes.entry.%d.key", i), k)
		form.Set(fmt.Sprintf("Attributes.entry.%d.value", i), v)
		i++
	}
	var out struct {
		Arn string `xml:"SubscribeResult>SubscriptionArn"`
	}
	err := c.call(ctx, form, &out)
	return out.Arn, err
}

// Publish publishes a message to a topic.
func (c Client) Publish(ctx context.Context, topicARN, subject, message string) error {
	form := url.Values{"Action": {"Publish"}, "TopicArn": {topicARN}, "Message": {message}}
	if subject != "" {
		form.Set("Subject", subject)
	}
	return c.call(ctx, form, nil)
}

// TopicName is the name in a topic's ARN.
func TopicName(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }

// Region is the region in an ARN.
func Region(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return ""
	}
	return parts[3]
}
