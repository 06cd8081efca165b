package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRunSaysItIsNotAModel: the program starts, says plainly what it is,
// and stops with its context.
func TestRunSaysItIsNotAModel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, []string{"-addr", addr}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "NOT A MODEL") || !strings.Contains(out.String(), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://"+addr) {
		t.Errorf("banner: %q", out.String())
	}
}
