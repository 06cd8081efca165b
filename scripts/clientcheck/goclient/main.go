//go:build clientcheck

// The Go client check: built by scripts/clientcheck in a temporary module
// next to the client oapi-codegen generated from the OpenAPI document (the
// build tag keeps it out of this module's builds). It calls the dev server
// named by $BASE with the demo credentials in $KEY, $PROJECT, $ACCOUNT and
// $PKEY, and exits non-zero on anything undocumented.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"clientcheck/client"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "go client:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	key := func(k string) client.RequestEditorFn {
		return func(_ context.Context, r *http.Request) error { r.Header.Set("x-api-key", k); return nil }
	}
	c, err := client.NewClientWithResponses(os.Getenv("BASE"))
	if err != nil {
		return err
	}
	project := os.Getenv("PROJECT")
	created, err := c.CreateAlertRuleWithResponse(ctx, nil, client.AlertRuleCreate{
		Name: "Go client", Metric: "api_errors", Operator: ">=", ThresholdValue: 3, WindowDuration: "5m", ProjectId: &project,
	}, key(os.Getenv("KEY")))
	if err != nil {
		return err
	}
	if created.JSON201 == nil {
		return fmt.Errorf("create: %d %s", created.StatusCode(), created.Body)
	}
	got, err := c.GetAlertRuleWithResponse(ctx, created.JSON201.Id, key(os.Getenv("KEY")))
	if err != nil {
		return err
	}
	if got.JSON200 == nil || got.JSON200.Name != "Go client" || !got.JSON200.Enabled {
		return fmt.Errorf("get: %d %s", got.StatusCode(), got.Body)
	}
	// A typed 422: a window the API does not take.
	bad, err := c.CreateAlertRuleWithResponse(ctx, nil, client.AlertRuleCreate{
		Name: "bad", Metric: "api_errors", Operator: ">=", ThresholdValue: 3, WindowDuration: "7m",
	}, key(os.Getenv("KEY")))
	if err != nil {
		return err
	}
	if bad.JSON422 == nil || len(bad.JSON422.Errors) == 0 || bad.JSON422.Errors[0].Field != "window_duration" {
		return fmt.Errorf("want a typed 422 naming window_duration: %d %s", bad.StatusCode(), bad.Body)
	}
	// The base host: a conversations page.
	page, err := c.ListConversationsV3WithResponse(ctx, os.Getenv("ACCOUNT"), project, nil, key(os.Getenv("PKEY")))
	if err != nil {
		return err
	}
	if page.JSON200 == nil {
		return fmt.Errorf("v3 conversations: %d %s", page.StatusCode(), page.Body)
	}
	fmt.Printf("go client: created %s, read it back, a typed 422 (%s: %s), %d conversations on the base host\n",
		created.JSON201.Id, bad.JSON422.Errors[0].Field, bad.JSON422.Errors[0].Message, len(page.JSON200.Conversations))
	return nil
}
