package awstrace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/voiceops/opsapi/shared/platform/tracing"
	"github.com/voiceops/opsapi/shared/platform/tracing/awstrace"
)

// TestSDKCallsReachTheDaemon makes a DynamoDB call against a stub service
// with the middleware on, and reads the subsegment from a UDP socket
// standing for the X-Ray daemon.
func TestSDKCallsReachTheDaemon(t *testing.T) {
	daemon, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer daemon.Close()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-amzn-RequestId", "REQ123")
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{"Item":{"pk":{"S":"a"}}}`))
	}))
	defer svc.Close()

	tr := tracing.New(daemon.LocalAddr().String(), time.Now)
	cfg := aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(svc.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
		APIOptions:  []func(*middleware.Stack) error{awstrace.Middleware(tr)},
	}
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1") //nolint:staticcheck
	ctx = tracing.Annotate(ctx, "rule_id", "rule_1")
	if _, err := dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}},
	}); err != nil {
		t.Fatal(err)
	}
	_ = daemon.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64<<10)
	n, _, err := daemon.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no datagram reached the daemon: %v", err)
	}
	_, body, _ := bytes.Cut(buf[:n], []byte("\n"))
	var doc struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		ParentID    string            `json:"parent_id"`
		AWS         map[string]string `json:"aws"`
		Annotations map[string]string `json:"annotations"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if doc.Name != "DynamoDB" || doc.Namespace != "aws" || doc.ParentID != "53995c3f42cd8ad8" ||
		doc.AWS["operation"] != "GetItem" || doc.AWS["region"] != "us-east-1" || doc.AWS["request_id"] != "REQ123" ||
		doc.Annotations["rule_id"] != "rule_1" {
		t.Errorf("subsegment %s: want DynamoDB GetItem in us-east-1, request REQ123, annotated rule_1", body)
	}
}

func TestOffAddsNoMiddleware(t *testing.T) {
	if awstrace.Middleware(nil) != nil {
		t.Error("a middleware without a tracer")
	}
}
