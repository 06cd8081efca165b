// Command bedrock-standin serves a local stand-in for Amazon Bedrock's
// Converse API, so that a Bedrock agent can be tried beside the dev server
// without AWS. It is not a model: it echoes what it is told, and calls the
// handoff tool when asked for a person.
//
//	go run ./scripts/bedrock-standin -addr 127.0.0.1:8788
//	AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://127.0.0.1:8788 go run ./scripts/dev
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/voiceops/opsapi/shared/conversations/agent/bedrockstandin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bedrock-standin:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("bedrock-standin", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8788", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv := &http.Server{Addr: *addr, Handler: bedrockstandin.New(), ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(out, "Bedrock stand-in on http://%s: NOT A MODEL. It echoes the user's words and calls the handoff tool when asked for a person.\n"+
		"Point the dev server at it: AWS_ENDPOINT_URL_BEDROCK_RUNTIME=http://%s\n", *addr, *addr)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}
