// Package lambdas runs the stack's functions as their real programs: each
// functions/<name> built for this machine with the synth's flags, run
// under the AWS Lambda Runtime Interface Emulator (RIE) with the template's
// environment, timeout and memory size. The RIE serves one invocation at a
// time, so a function has a pool of RIE processes (its concurrency).
package lambdas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// RIEModule is the pinned Runtime Interface Emulator (DESIGN.md).
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// BuildRIE installs the pinned RIE into dir (cached: a second call only
// checks it) and returns its path.
func BuildRIE(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "aws-lambda-rie")
	cmd := exec.CommandContext(ctx, "go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "CGO_ENABLED=0", "GOFLAGS=-mod=mod")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the Lambda RIE (%s): %v\n%s", RIEModule, err, out)
	}
	return bin, nil
}

// BuildFlags are infra/bundle.go's flags; GOARCH is this machine's, so
// the RIE can run the binary.
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// BuildFunction builds root/functions/<name> into dir/<name>/bootstrap.
func BuildFunction(ctx context.Context, root, name, dir string) (string, error) {
	return BuildPackage(ctx, root, "./functions/"+name, filepath.Join(dir, name))
}

// BuildPackage builds the main package pkg (relative to root) into
// dir/bootstrap, as BuildFunction does.
func BuildPackage(ctx context.Context, root, pkg, dir string) (string, error) {
	out := filepath.Join(dir, "bootstrap")
	name := pkg
	args := append(append([]string{"build"}, BuildFlags...), "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", name, err, b)
	}
	return out, nil
}

// Spec is one function as the template defines it.
type Spec struct {
	Name         string // functions/<Name>
	FunctionName string // its Lambda name
	Bootstrap    string
	Env          map[string]string // the template's Environment.Variables
	Timeout      time.Duration
	MemoryMB     int
	// AccessKeyID identifies the function to the AWS proxy.
	AccessKeyID string
	// Concurrency caps the function's RIE processes.
	Concurrency int
}

// BedrockEndpointEnv is the SDK's endpoint variable of Bedrock Runtime:
// the functions reach the runner's Bedrock stand-in through it, as they
// would a regional endpoint, with no variable of the project's own.
const BedrockEndpointEnv = "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"

// Runner invokes functions.
type Runner struct {
	RIE         string
	Region      string
	AWSEndpoint string // the AWS proxy
	// BedrockEndpoint is the proxy's Bedrock Runtime endpoint, set as the
	// SDK's standard AWS_ENDPOINT_URL_BEDROCK_RUNTIME; none when empty.
	BedrockEndpoint string
	LogDir          string // one <function>.log per function
	Log             *slog.Logger

	mu    sync.Mutex
	pools map[string]*pool
}

// Add registers a function.
func (r *Runner) Add(s Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pools == nil {
		r.pools = map[string]*pool{}
	}
	if s.Concurrency < 1 {
		s.Concurrency = 4
	}
	r.pools[s.Name] = &pool{spec: s, runner: r, sem: make(chan struct{}, s.Concurrency)}
}

// Specs returns the registered functions.
func (r *Runner) Spec(name string) (Spec, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pools[name]
	if !ok {
		return Spec{}, false
	}
	return p.spec, true
}

// Result is one invocation's outcome.
type Result struct {
	Output        []byte
	FunctionError bool
	TimedOut      bool
	ColdStart     bool
	Duration      time.Duration
}

// Invoke runs the function synchronously.
func (r *Runner) Invoke(ctx context.Context, name string, payload []byte) (Result, error) {
	r.mu.Lock()
	p, ok := r.pools[name]
	r.mu.Unlock()
	if !ok {
		return Result{}, fmt.Errorf("no function %s", name)
	}
	return p.invoke(ctx, payload)
}

// ColdStart starts a fresh environment of the function (an RIE process
// and, on its first invocation, the function's own init), invokes it once
// and stops it. It returns the time from the process start to the answer:
// what a cold invocation adds on this machine.
func (r *Runner) ColdStart(ctx context.Context, name string, payload []byte) (time.Duration, error) {
	r.mu.Lock()
	p, ok := r.pools[name]
	r.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("no function %s", name)
	}
	start := time.Now()
	in, err := p.start()
	if err != nil {
		return 0, err
	}
	defer p.kill(in)
	if _, err := in.invoke(ctx, payload, p.spec.Timeout); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// Kill kills the processes of the function's running invocations (not
// its idle environments) and returns how many: a crash in the middle of a
// batch, which the invocation reports as an error, as Lambda does.
func (r *Runner) Kill(name string) int {
	r.mu.Lock()
	p, ok := r.pools[name]
	r.mu.Unlock()
	if !ok {
		return 0
	}
	p.mu.Lock()
	var busy []*instance
	for _, in := range p.all {
		if !slices.Contains(p.idle, in) {
			busy = append(busy, in)
		}
	}
	p.mu.Unlock()
	for _, in := range busy {
		_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL) // the RIE and the function: a crash
	}
	return len(busy)
}

// Busy returns how many invocations of the function are running.
func (r *Runner) Busy(name string) int {
	r.mu.Lock()
	p, ok := r.pools[name]
	r.mu.Unlock()
	if !ok {
		return 0
	}
	return len(p.sem)
}

// Close stops every RIE process.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.pools {
		p.close()
	}
}

type pool struct {
	spec   Spec
	runner *Runner
	sem    chan struct{} // one token per running invocation

	mu     sync.Mutex
	idle   []*instance
	all    []*instance
	closed bool // Close ran: a late invocation (a schedule's, a poller's) starts nothing
}

// errClosed answers an invocation that comes after Close.
var errClosed = errors.New("lambdas: the runner is closed")

type instance struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
	warm bool
}

func (p *pool) invoke(ctx context.Context, payload []byte) (Result, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-p.sem }()
	p.mu.Lock()
	var in *instance
	if n := len(p.idle); n > 0 {
		in, p.idle = p.idle[n-1], p.idle[:n-1]
	}
	p.mu.Unlock()
	if in != nil {
		select {
		case <-in.done: // it died while idle
			in = nil
		default:
		}
	}
	if in == nil {
		var err error
		if in, err = p.start(); err != nil {
			return Result{}, err
		}
	}
	res, err := in.invoke(ctx, payload, p.spec.Timeout)
	if err != nil || res.TimedOut {
		// Lambda discards an environment after a timeout; so do we.
		p.kill(in)
		return res, err
	}
	p.mu.Lock()
	p.idle = append(p.idle, in)
	p.mu.Unlock()
	return res, nil
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start launches an RIE process for the function and waits until it
// listens. The function itself starts (init) on the first invocation.
func (p *pool) start() (*instance, error) {
	s := p.spec
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p.runner.RIE, "--log-level", "error",
		"--runtime-interface-emulator-address", addr, "--runtime-api-address", apiAddr, s.Bootstrap)
	cmd.Dir = filepath.Dir(s.Bootstrap)
	// Its own process group, so that stopping it stops the function's
	// process (the RIE's child) too, not only the RIE.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Only what Lambda sets and the template's variables: nothing of the
	// runner's own environment leaks in.
	env := []string{
		"PATH=/usr/bin:/bin",
		"AWS_REGION=" + p.runner.Region, "AWS_DEFAULT_REGION=" + p.runner.Region,
		"AWS_ACCESS_KEY_ID=" + s.AccessKeyID, "AWS_SECRET_ACCESS_KEY=stack-runner-secret",
		"AWS_SESSION_TOKEN=stack-runner-session-" + s.Name,
		"AWS_ENDPOINT_URL=" + p.runner.AWSEndpoint,
		"AWS_LAMBDA_FUNCTION_NAME=" + s.FunctionName,
		"AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(int(s.Timeout/time.Second)),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(s.MemoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"_HANDLER=bootstrap",
		"TZ=:UTC",
	}
	if p.runner.BedrockEndpoint != "" {
		env = append(env, BedrockEndpointEnv+"="+p.runner.BedrockEndpoint)
	}
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	if p.runner.LogDir != "" {
		f, err := os.OpenFile(filepath.Join(p.runner.LogDir, s.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		cmd.Stdout, cmd.Stderr = f, f
		defer f.Close()
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return nil, errClosed
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the RIE for %s: %w", s.Name, err)
	}
	in := &instance{cmd: cmd, addr: addr, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(in.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-in.done:
			return nil, fmt.Errorf("the RIE of %s exited at start (see its log)", s.Name)
		default:
		}
		if time.Now().After(deadline) {
			in.stop()
			return nil, fmt.Errorf("the RIE of %s did not listen on %s", s.Name, addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.mu.Lock()
	if p.closed { // Close ran while it started
		p.mu.Unlock()
		in.stop()
		return nil, errClosed
	}
	p.all = append(p.all, in)
	p.mu.Unlock()
	return in, nil
}

// stop kills the instance's process group (the RIE and the function's
// process) and waits for the RIE to exit.
func (in *instance) stop() {
	_ = syscall.Kill(-in.cmd.Process.Pid, syscall.SIGKILL)
	<-in.done
}

func (p *pool) kill(in *instance) {
	in.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.all {
		if x == in {
			p.all = append(p.all[:i], p.all[i+1:]...)
			break
		}
	}
}

func (p *pool) close() {
	p.mu.Lock()
	all := p.all
	p.all, p.idle, p.closed = nil, nil, true
	p.mu.Unlock()
	for _, in := range all {
		in.stop()
	}
}

var invokeClient = &http.Client{}

func (in *instance) invoke(ctx context.Context, payload []byte, timeout time.Duration) (Result, error) {
	cold := !in.warm
	in.warm = true
	// The RIE enforces the function's timeout; the extra second covers
	// its own answer.
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+in.addr+"/2015-03-31/functions/function/invocations", bytes.NewReader(payload))
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	resp, err := invokeClient.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("invoking through the RIE: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return Result{}, err
	}
	res := Result{Output: out, ColdStart: cold, Duration: time.Since(start)}
	switch {
	case bytes.HasPrefix(out, []byte("Task timed out")):
		res.TimedOut, res.FunctionError = true, true
		res.Output, _ = json.Marshal(map[string]string{"errorMessage": string(out), "errorType": "Sandbox.Timedout"})
	case resp.StatusCode != http.StatusOK:
		res.FunctionError = true
		if !json.Valid(out) {
			res.Output, _ = json.Marshal(map[string]string{"errorMessage": strings.TrimSpace(string(out)), "errorType": "Runtime.ExitError"})
		}
	case isErrorPayload(out):
		res.FunctionError = true
	}
	return res, nil
}

// isErrorPayload tells a runtime's error report ({"errorMessage",
// "errorType"}) from a function's output.
func isErrorPayload(out []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil {
		return false
	}
	_, msg := m["errorMessage"]
	_, typ := m["errorType"]
	_, status := m["statusCode"]
	return msg && typ && !status
}

// ErrNoFunction is returned for an unknown function.
var ErrNoFunction = errors.New("no such function")
