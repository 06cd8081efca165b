package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
)

// startBedrock serves the Bedrock Runtime stand-in on loopback until ctx
// ends. The functions reach it through the AWS proxy's Bedrock Runtime
// endpoint (their AWS_ENDPOINT_URL_BEDROCK_RUNTIME), which checks each
// Converse against the function's policy (context bedrockModels and
// bedrockGuardrails) before forwarding it.
func startBedrock(ctx context.Context) (*bedrockstandin.Server, *url.URL, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	standin := bedrockstandin.New()
	srv := &http.Server{Handler: standin, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return standin, &url.URL{Scheme: "http", Host: ln.Addr().String()}, nil
}
