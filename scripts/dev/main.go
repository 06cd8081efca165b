// Command dev is the local dev server: every route of both hosts on one
// address, with the embedded in-memory stores by default, or DynamoDB at
// AWS_ENDPOINT_URL (LocalStack, moto) when that is set.
//
//	go run ./scripts/dev [-addr 127.0.0.1:8080] [-credentials FILE]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/voiceops/opsapi/shared/api"
	"github.com/voiceops/opsapi/shared/apispec"
	"github.com/voiceops/opsapi/shared/auth"
	"github.com/voiceops/opsapi/shared/dynamo"
	"github.com/voiceops/opsapi/shared/lambdamain"
	"github.com/voiceops/opsapi/shared/memory"
	"github.com/voiceops/opsapi/shared/provision"
	"github.com/voiceops/opsapi/shared/voiceops"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

type options struct {
	addr          string
	credentials   string
	region        string
	tablePrefix   string
	allowLoopback bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: go run ./scripts/dev [flags]

Serves both hosts of the API on one address with demo accounts, and writes
their credentials as JSON (to -credentials FILE, else to standard output).
With AWS_ENDPOINT_URL set, state lives in DynamoDB there (tables are created
if missing); otherwise in memory. Stops cleanly on Ctrl-C.

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`HOST:PORT` to listen on")
	fs.StringVar(&o.credentials, "credentials", "", "write the demo credentials JSON to `FILE` once the server is ready")
	fs.StringVar(&o.region, "region", "us", "service region the keys are bound to: us, uk or eu")
	fs.StringVar(&o.tablePrefix, "table-prefix", "voiceops-local", "DynamoDB table name prefix (with AWS_ENDPOINT_URL)")
	fs.BoolVar(&o.allowLoopback, "allow-loopback-webhooks", false, "let webhook endpoints use http(s) URLs on loopback addresses, for local receivers")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if _, ok := voiceops.LookupRegion(o.region); !ok {
		return o, fmt.Errorf("-region must be us, uk or eu")
	}
	return o, nil
}

// run starts the server and blocks until ctx ends. ready, when not nil,
// receives the credentials once the server accepts connections (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready chan<- Credentials) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	stores, backend, err := openStores(ctx, getenv, o.tablePrefix)
	if err != nil {
		return err
	}
	region := voiceops.Region(o.region)
	deps := api.Deps{
		Stores: stores, Auth: auth.New(stores.Accounts, region, time.Now), Now: time.Now, Log: log,
		URLPolicy: voiceops.URLPolicy{AllowLoopback: o.allowLoopback},
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(apispec.Document())
	})
	mux.Handle("/", api.Studio(deps))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	url := "http://" + ln.Addr().String()
	creds, err := seed(ctx, provision.Provisioner{Accounts: stores.Accounts, Region: region, Now: time.Now}, url, region)
	if err != nil {
		_ = srv.Close()
		return fmt.Errorf("seeding demo accounts: %w", err)
	}
	if err := writeCredentials(creds, o.credentials, stdout); err != nil {
		_ = srv.Close()
		return err
	}
	log.Info("serving", "url", url, "stores", backend, "openapi", url+"/openapi.json")
	if ready != nil {
		ready <- creds
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	log.Info("shutting down")
	return srv.Shutdown(shutdownCtx)
}

// openStores returns DynamoDB stores when AWS_ENDPOINT_URL is set, creating
// missing tables, else the in-memory stores.
func openStores(ctx context.Context, getenv func(string) string, prefix string) (voiceops.Stores, string, error) {
	endpoint := getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		return memory.New().Stores(), "memory", nil
	}
	cfg, err := lambdamain.AWSConfig(ctx)
	if err != nil {
		return voiceops.Stores{}, "", err
	}
	client := dynamodb.NewFromConfig(cfg)
	names := dynamo.TableNamesFor(prefix)
	if err := dynamo.CreateTables(ctx, client, names); err != nil {
		return voiceops.Stores{}, "", fmt.Errorf("creating tables at %s: %w", endpoint, err)
	}
	return dynamo.New(client, names).Stores(), "dynamodb at " + endpoint, nil
}

func writeCredentials(c Credentials, path string, stdout io.Writer) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = stdout.Write(b)
		return err
	}
	// Written whole then renamed, so a script polling for the file never
	// reads half of it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
