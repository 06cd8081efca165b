package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/voiceops/opsapi/scripts/stack/apigw"
	"github.com/voiceops/opsapi/scripts/stack/awsproxy"
	"github.com/voiceops/opsapi/scripts/stack/iam"
	"github.com/voiceops/opsapi/scripts/stack/lambdas"
	"github.com/voiceops/opsapi/shared/platform/tables"
)

// bareFunction is the bare function's name in the runner: no function of
// the template has it (there is no functions/bare).
const bareFunction = "bare"

// BareRoute is the bare function's only route.
const BareRoute = "GET /bare"

// ServeBare builds the bare function (testdata/bare: one DynamoDB GetItem
// on the config table, then 200) and serves it on an HTTP API of its own,
// through the same local API Gateway, Lambda runner and AWS endpoint as
// the template's functions; it returns the URL to request. Its role
// allows dynamodb:GetItem on the config table alone, and its calls are
// checked against it as the template's functions' are. The template's
// APIs do not change: the other scenarios see nothing of it. Later calls
// return the same URL.
func (s *Stack) ServeBare(ctx context.Context) (string, error) {
	s.bareMu.Lock()
	defer s.bareMu.Unlock()
	if s.bareURL != "" {
		return s.bareURL, nil
	}
	table := s.Topology.TableNames().Config
	if table == "" {
		return "", fmt.Errorf("the template has no config table")
	}
	bs, err := lambdas.BuildPackage(ctx, s.root, "./scripts/stack/testdata/bare", filepath.Join(s.cache, "fixtures", bareFunction))
	if err != nil {
		return "", err
	}
	key := accessKeyID(bareFunction)
	s.Proxy.AddPrincipal(key, awsproxy.Principal{Function: bareFunction, Role: bareFunction, Policy: iam.Policy{Statements: []iam.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resource: []string{s.Proxy.ARNs.Table(table)}}}}})
	s.Runner.Add(lambdas.Spec{Name: bareFunction, FunctionName: bareFunction, Bootstrap: bs, Env: map[string]string{tables.Config.EnvVar: table},
		Timeout: 10 * time.Second, MemoryMB: 128, AccessKeyID: key, Concurrency: 1})
	router, err := apigw.NewRouter([]apigw.Route{{Key: BareRoute, Function: bareFunction}})
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	id := randomID(10)
	s.serve(ln, s.monitor.measured(id, &apigw.API{Name: "bare", ID: id, Account: account, Router: router, Invoke: s.invoke}))
	s.bareURL = "http://" + ln.Addr().String() + "/bare"
	return s.bareURL, nil
}
