// Command bench prints the project's headline figures side by side with
// their baselines, all measured in the same run on this machine:
//
//   - the request path: the full stack (Lambda adapter, routing, auth,
//     decoding, validation, store) against a bare handler writing the same
//     JSON through the same adapter, interleaved round by round;
//   - the conversations list as a whole request (adapter, auth, the memory
//     store's reads, the page) against the same request with the page
//     built by encoding/json, interleaved round by round;
//   - the concurrency series as a whole request (one week, 100,000
//     conversations) against the naive per-minute count and against the
//     same request counting nothing, interleaved;
//   - the dispatcher's deliveries per second against a bare signed POST
//     loop to the same receiver, interleaved;
//   - the time to notify: scripts/notifybench against the embedded dev
//     server with its default evaluation settings;
//   - every function's bootstrap (linux/arm64, stripped, as deployed), its
//     package init (GODEBUG=inittrace=1) and its start to the first request
//     to the Lambda Runtime API, against a hello-world aws-lambda-go
//     function (scripts/bench/hello) built the same way.
//
// Usage, from the repository root:
//
//	go run ./scripts/bench [-runs 15] [-benchtime 2s] [-only go|functions] [-function outbound]
//
// The Go figures come from the packages' own benchmarks (go test -bench);
// the function figures from a local Runtime API stub: each bootstrap is
// started natively with AWS_LAMBDA_RUNTIME_API pointing at it and timed
// from exec to its first GET .../invocation/next, in -runs rounds of pairs
// with the hello world (A B, then B A: interleaved, so that both see the
// same machine), each ratio taken within its round; the median ratio is
// shown with its extremes and interquartile range. Sizes are the arm64
// bootstraps'; times are of host builds (the header says which), since
// this machine may not run arm64.
// The same stub answers the one AWS call a function makes before that (the
// internal key from Secrets Manager, where the function takes internal
// requests), through AWS_ENDPOINT_URL.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	runs := flag.Int("runs", 15, "rounds of starts of each function with the hello world (A B, then B A)")
	benchtime := flag.String("benchtime", "2s", "go test -benchtime of the Go benchmarks")
	only := flag.String("only", "", "`part` to run alone: go or functions")
	function := flag.String("function", "", "time only the function of this `name` (functions/<name>) against the hello world")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: go run ./scripts/bench [flags]

Prints the project's headline figures next to their baselines, measured in
the same run: the request path against a bare handler, the conversations
list against the same request with encoding/json, the concurrency series
against a per-minute count and a floor, the dispatcher,
the time to notify, and each function's size, init and start against a
hello world. About four minutes.

Example:
  go run ./scripts/bench -only go

Flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	out := tabwriter.NewWriter(os.Stdout, 2, 8, 2, ' ', 0)
	fmt.Fprintf(out, "scripts/bench on %s/%s, %d CPUs, %s, %s, load average at start %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), cpuModel(), time.Now().UTC().Format(time.DateOnly), loadAverage())
	ok := true
	if *only == "" || *only == "go" {
		ok = goBenchmarks(out, *benchtime) && ok
	}
	if *only == "" || *only == "functions" {
		ok = functions(out, *runs, *function) && ok
	}
	out.Flush()
	if !ok {
		os.Exit(1)
	}
}

// --- Go benchmarks ----------------------------------------------------------

// result is one benchmark's line: its metrics by unit (ns/op, B/op,
// allocs/op, and what it reports itself).
type result map[string]float64

// runBench runs the benchmarks of pkg matching pattern and returns their
// results by name (without the -GOMAXPROCS suffix).
func runBench(pkg, pattern, benchtime string) (map[string]result, error) {
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-benchmem", "-count", "1", pkg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go test -bench %s %s: %v\n%s%s", pattern, pkg, err, stdout.String(), stderr.String())
	}
	return parseBench(stdout.String()), nil
}

var procSuffix = regexp.MustCompile(`-\d+$`)

func parseBench(s string) map[string]result {
	out := map[string]result{}
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		r := result{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				r[f[i+1]] = v
			}
		}
		out[procSuffix.ReplaceAllString(f[0], "")] = r
	}
	return out
}

func goBenchmarks(out io.Writer, benchtime string) bool {
	ok := true
	get := func(pkg, pattern string) map[string]result {
		rs, err := runBench(pkg, pattern, benchtime)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			ok = false
		}
		return rs
	}
	const pathRound = 2000 // shared/testsupport/apitest's pathRound: the requests of a round
	fmt.Fprintf(out, "Request path, rounds of %d requests (shared/testsupport/apitest)\tus/request\tallocs/request\tx bare, median (min-max; IQR)\trounds\n", pathRound)
	api := get("./shared/testsupport/apitest", "^BenchmarkRequestPathAB$")
	perReq := func(v float64) string { return num(v * 1000 / pathRound) }
	for _, row := range []struct{ label, name string }{
		{"create a rule, full stack", "create"},
		{"create, without the access line and metrics", "create-without-access-line-and-metrics"},
		{"get a rule, full stack", "get/rate-limited"},
		{"get a rule, without the rate limiter", "get/no-rate-limit"},
	} {
		r := api["BenchmarkRequestPathAB/"+row.name]
		fmt.Fprintf(out, "  %s\t%s\t%s\t%s\t%s\n", row.label, perReq(r["a-ms"]), num(r["a-allocs"]/pathRound), abSpread(r), strconv.Itoa(int(r["rounds"])))
		fmt.Fprintf(out, "    bare handler, same JSON, same adapter (baseline)\t%s\t%s\t1.00\t\n", perReq(r["base-ms"]), num(r["base-allocs"]/pathRound))
	}

	// The list and the series: whole requests against same-request
	// baselines, interleaved round by round (shared/testsupport/abbench).
	base := get("./shared/conversations/conversationsapi", "^(BenchmarkListRequestAB|BenchmarkConcurrencyAB)$")
	fmt.Fprintln(out, "\nConversations list v3, whole request: adapter, auth, memory-store reads, page (shared/conversations/conversationsapi)\tms\tallocs\tx baseline, median (min-max; IQR)\trounds")
	for _, limit := range []string{"5000", "30"} {
		r := base["BenchmarkListRequestAB/limit="+limit]
		what := "a page of 30"
		if limit == "5000" {
			what = fmt.Sprintf("limit=5000: the 5 MiB budget holds %s of them (%s MiB on the wire)", num(r["conversations/page"]), mib(r["wire-bytes/page"]))
		}
		fmt.Fprintf(out, "  %s\t%s\t%s\t%s\t%s\n", what, num2(r["a-ms"]), num(r["a-allocs"]), abSpread(r), strconv.Itoa(int(r["rounds"])))
		fmt.Fprintf(out, "    same request, page by encoding/json (baseline)\t%s\t%s\t1.00\t\n", num2(r["base-ms"]), num(r["base-allocs"]))
	}

	fmt.Fprintln(out, "\nConcurrency series, one week of 100,000 conversations, whole request, reads free (shared/conversations/conversationsapi)\tms\tallocs\tsweep / baseline, median (min-max; IQR)\trounds")
	for _, s := range []string{"", "variant"} {
		label := "whole project"
		if s != "" {
			label = "slice_by=" + s
		}
		for i, vs := range []string{"per-minute", "floor"} {
			r := base["BenchmarkConcurrencyAB/slice_by="+s+"/vs="+vs]
			if i == 0 {
				fmt.Fprintf(out, "  %s, the sweep (%s body bytes)\t%s\t%s\t\t\n", label, num(r["body-bytes"]), num2(r["a-ms"]), num(r["a-allocs"]))
			}
			what := "    baseline: the same request counting nothing (floor)"
			if vs == "per-minute" {
				what = fmt.Sprintf("    baseline: naive per-minute count (wrong in %s windows, by up to %s)", num(r["minute-wrong-windows"]), num(r["minute-max-over"]))
			}
			fmt.Fprintf(out, "%s\t%s\t%s\t%s\t%s\n", what, num2(r["base-ms"]), num(r["base-allocs"]), abSpread(r), strconv.Itoa(int(r["rounds"])))
		}
	}

	fmt.Fprintln(out, "\nDispatcher, memory stores, local HTTPS receiver, 16 at once (shared/alerts/delivery)\tdeliveries/s\tallocs/round\ttime x bare, median (min-max; IQR)\trounds")
	disp := get("./shared/alerts/delivery", "^BenchmarkDispatchAB$")["BenchmarkDispatchAB"]
	perSec := func(ms float64) float64 {
		if ms == 0 {
			return 0
		}
		return disp["deliveries/round"] / ms * 1000
	}
	fmt.Fprintf(out, "  read, claim, sign, send and record (rounds of %s)\t%s\t%s\t%s\t%s\n", num(disp["deliveries/round"]), num(perSec(disp["a-ms"])), num(disp["a-allocs"]), abSpread(disp), strconv.Itoa(int(disp["rounds"])))
	fmt.Fprintf(out, "  bare signed POST loop, same receiver (baseline)\t%s\t%s\t1.00\t\n", num(perSec(disp["base-ms"])), num(disp["base-allocs"]))

	fmt.Fprintln(out, "\nTime to notify, embedded dev server, default settings (scripts/notifybench)\tp50\tp99\ttrials")
	if r, err := timeToNotify(); err != nil {
		fmt.Fprintln(os.Stderr, "time to notify:", err)
		ok = false
	} else {
		fmt.Fprintf(out, "  breaching event accepted to alerts.triggered received\t%s\t%s\t%s\n", r.p50, r.p99, r.trials)
		for _, c := range r.classes {
			fmt.Fprintf(out, "    %s\t%s\t%s\t%s\n", c[0], c[1], c[2], c[3])
		}
	}
	fmt.Fprintln(out)
	return ok
}

type notifyResult struct {
	p50, p99, trials string
	classes          [][4]string // quiet and busy scopes: name, p50, p99, trials
}

var (
	// notifybench's summary lines (scripts/latency.Summary): "all trials:
	// n 24, p50 250ms, p99 n/a (max of 24), min 90ms, max 700ms".
	notifyLine = regexp.MustCompile(`all trials:\s+n (\d+), p50 (\S+), (p99 [^,]+), min`)
	classLine  = regexp.MustCompile(`(quiet|busy) scopes:\s+n (\d+), p50 (\S+), (p99 [^,]+), min`)
	trialsLine = regexp.MustCompile(`trials (\d+), delivered (\d+), missing (\d+), doubled (\d+)`)
)

// timeToNotify starts the dev server with its default evaluation settings
// (loopback webhooks allowed, for the local receiver) and runs
// scripts/notifybench against it: 2 rounds of 12 rules on 4 projects.
func timeToNotify() (notifyResult, error) {
	tmp, err := os.MkdirTemp("", "bench-notify")
	if err != nil {
		return notifyResult{}, err
	}
	defer os.RemoveAll(tmp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return notifyResult{}, err
	}
	addr := ln.Addr().String()
	ln.Close()
	dev, creds := filepath.Join(tmp, "dev"), filepath.Join(tmp, "creds.json")
	if err := build("./scripts/dev", dev); err != nil {
		return notifyResult{}, err
	}
	srv := exec.Command(dev, "-addr", addr, "-credentials", creds, "-allow-loopback-webhooks")
	srv.Env = os.Environ()
	var srvLog bytes.Buffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	if err := srv.Start(); err != nil {
		return notifyResult{}, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	for i := 0; ; i++ {
		if _, err := os.Stat(creds); err == nil {
			break
		}
		if i == 300 {
			return notifyResult{}, fmt.Errorf("the dev server did not start: %s", srvLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd := exec.Command("go", "run", "./scripts/notifybench", "-credentials", creds, "-rounds", "2")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return notifyResult{}, fmt.Errorf("notifybench: %v: %s", err, b)
	}
	return parseNotify(b)
}

// parseNotify reads notifybench's output. A p99 of fewer trials than
// scripts/latency.MinP99 reads "p99 n/a (max of N)", as notifybench
// prints it.
func parseNotify(b []byte) (notifyResult, error) {
	m, t := notifyLine.FindSubmatch(b), trialsLine.FindSubmatch(b)
	if m == nil || t == nil {
		return notifyResult{}, fmt.Errorf("notifybench printed no figures: %s", b)
	}
	r := notifyResult{p50: string(m[2]), p99: strings.TrimPrefix(string(m[3]), "p99 "),
		trials: fmt.Sprintf("%s (delivered %s, missing %s, doubled %s)", t[1], t[2], t[3], t[4])}
	for _, c := range classLine.FindAllSubmatch(b, -1) {
		name := "quiet scope (the last evaluation more than 1 s ago)"
		if string(c[1]) == "busy" {
			name = "busy scope (evaluated within the last second)"
		}
		r.classes = append(r.classes, [4]string{name, string(c[3]), strings.TrimPrefix(string(c[4]), "p99 "), string(c[2])})
	}
	return r, nil
}

// --- functions ----------------------------------------------------------------

type function struct {
	name, dir string
	size      int64  // arm64 stripped bootstrap
	native    string // the host build that is started
	env       []string
	// Medians over the rounds, and the per-round ratios to the hello world
	// started in the same round (A B, then B A).
	init, start           time.Duration
	helloInit, helloStart time.Duration
	initRatio, startRatio spread
	err                   error
}

// spread is a ratio's median with its extremes and interquartile range:
// the extremes say how noisy the machine was, which the quartiles hide.
type spread struct{ min, p25, p50, p75, max float64 }

func spreadOf(vs []float64) spread {
	if len(vs) == 0 {
		return spread{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	at := func(q float64) float64 { return s[int(q*float64(len(s)-1)+0.5)] }
	return spread{s[0], at(0.25), at(0.5), at(0.75), s[len(s)-1]}
}

// String is "median (min-max; IQR p25-p75)".
func (s spread) String() string {
	return fmt.Sprintf("%.2f (%.2f-%.2f; IQR %.2f-%.2f)", s.p50, s.min, s.max, s.p25, s.p75)
}

func functions(out io.Writer, runs int, only string) bool {
	tmp, err := os.MkdirTemp("", "bench-functions")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return false
	}
	defer os.RemoveAll(tmp)
	dirs, _ := filepath.Glob("functions/*")
	hello := &function{name: "hello world (baseline)", dir: "./scripts/bench/hello"}
	var fns []*function
	for _, d := range dirs {
		if only != "" && filepath.Base(d) != only {
			continue
		}
		if st, err := os.Stat(filepath.Join(d, "main.go")); err == nil && !st.IsDir() {
			fns = append(fns, &function{name: filepath.Base(d), dir: "./" + d})
		}
	}
	if hello.err = prepare(hello, tmp); hello.err != nil {
		fmt.Fprintf(out, "hello world: %v\n", hello.err)
		return false
	}
	ok := true
	for _, f := range fns {
		if f.err = prepare(f, tmp); f.err == nil {
			f.err = measure(f, hello, runs)
		}
		if f.err != nil {
			ok = false
		}
	}
	fmt.Fprintf(out, "Function: MiB of its linux/arm64 stripped bootstrap (as deployed); init and start timed on a %s/%s build of the same flags (this machine's), %d rounds of A B / B A with the hello world\tMiB\tinit ms\thello init ms\tx hello init, median (min-max; IQR)\tstart to /next ms\thello start ms\tx hello start, median (min-max; IQR)\n", runtime.GOOS, runtime.GOARCH, runs)
	fmt.Fprintf(out, "  hello world (baseline: scripts/bench/hello, aws-lambda-go's lambda.Start of a handler that returns a string)\t%.1f\t\t\t\t\t\t\n", float64(hello.size)/(1<<20))
	for _, f := range fns {
		if f.err != nil {
			msg := f.err.Error()
			if len(msg) > 160 {
				msg = msg[:160] + "..."
			}
			fmt.Fprintf(out, "  %s\terror: %s\t\t\t\t\t\t\n", f.name, msg)
			continue
		}
		fmt.Fprintf(out, "  %s\t%.1f\t%.2f\t%.2f\t%s\t%.1f\t%.1f\t%s\n", f.name, float64(f.size)/(1<<20),
			msOf(f.init), msOf(f.helloInit), f.initRatio, msOf(f.start), msOf(f.helloStart), f.startRatio)
	}
	return ok
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// buildFlags are infra/bundle.go's: what cdk synth deploys.
var buildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

func build(dir, out string, env ...string) error {
	cmd := exec.Command("go", append(append([]string{"build"}, buildFlags...), "-o", out, dir)...)
	cmd.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, env...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", dir, err, b)
	}
	return nil
}

// prepare builds f (the arm64 bootstrap for its size, a host build to
// start) and finds the environment it needs to start.
func prepare(f *function, tmp string) error {
	arm := filepath.Join(tmp, f.dir[2:], "arm64")
	if err := build(f.dir, arm, "GOOS=linux", "GOARCH=arm64"); err != nil {
		return err
	}
	st, err := os.Stat(arm)
	if err != nil {
		return err
	}
	f.size = st.Size()
	f.native = filepath.Join(tmp, f.dir[2:], "native")
	if err := build(f.dir, f.native); err != nil {
		return err
	}
	f.env = functionEnv()
	for range 3 { // a variable this harness did not know: set it and start again
		_, stderr, err := startOnce(f.native, f.env, false)
		if err == nil {
			return nil
		}
		missing := missingEnv(stderr)
		if len(missing) == 0 {
			return err
		}
		for _, m := range missing {
			f.env = append(f.env, m+"=bench")
		}
	}
	return fmt.Errorf("%s: still missing environment after 3 starts", f.name)
}

// measure starts f and the hello world in pairs, runs rounds of them,
// alternating the order (A B, then B A) so that both see the same machine
// state, untraced for the start time and traced (GODEBUG=inittrace=1) for
// the init time; each ratio is taken within its round.
func measure(f, hello *function, runs int) error {
	var starts, hStarts, inits, hInits []time.Duration
	var startRatios, initRatios []float64
	for round := range runs {
		for _, traced := range []bool{false, true} {
			pair := []*function{hello, f}
			if round%2 == 1 {
				pair = []*function{f, hello}
			}
			var got [2]time.Duration
			for _, g := range pair {
				start, stderr, err := startOnce(g.native, g.env, traced)
				if err != nil {
					return err
				}
				if traced {
					start = initTotal(stderr)
				}
				if g == f {
					got[1] = start
				} else {
					got[0] = start
				}
			}
			if traced {
				hInits, inits = append(hInits, got[0]), append(inits, got[1])
				if got[0] > 0 {
					initRatios = append(initRatios, float64(got[1])/float64(got[0]))
				}
			} else {
				hStarts, starts = append(hStarts, got[0]), append(starts, got[1])
				startRatios = append(startRatios, float64(got[1])/float64(got[0]))
			}
		}
	}
	f.start, f.helloStart, f.init, f.helloInit = median(starts), median(hStarts), median(inits), median(hInits)
	f.startRatio, f.initRatio = spreadOf(startRatios), spreadOf(initRatios)
	return nil
}

// functionEnv is what the functions read at start: CDK's variables, with
// values that reach nothing (no AWS call is made before the first event).
func functionEnv() []string {
	return append(os.Environ(),
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=bench", "AWS_SECRET_ACCESS_KEY=bench", "SERVICE_REGION=us",
		"CONFIG_TABLE=bench", "METRICS_TABLE=bench", "DELIVERIES_TABLE=bench", "CONVERSATIONS_TABLE=bench", "CALLS_TABLE=bench",
		"DELIVERY_QUEUE_URL=https://sqs.us-east-1.amazonaws.com/000000000000/bench", "INTERNAL_KEY_PARAMETER=bench",
		"CONSOLE_BASE_URL=https://base.bench.example", // a URL: the console checks it at start
		"MESSAGE=use a regional address", "AWS_LAMBDA_FUNCTION_NAME=bench", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024", "AWS_LAMBDA_FUNCTION_VERSION=$LATEST")
}

var missingRE = regexp.MustCompile(`not set in the environment: \[([^\]]*)\]`)

// missingEnv reads the variables lambdamain.Load reports missing from a
// function's stderr.
func missingEnv(stderr string) []string {
	m := missingRE.FindStringSubmatch(stderr)
	if m == nil {
		return nil
	}
	return strings.Fields(m[1])
}

// startOnce starts bin against a Runtime API stub and returns the time
// from exec to its first GET of the next invocation, and its stderr.
func startOnce(bin string, env []string, traced bool) (time.Duration, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, "", err
	}
	first := make(chan time.Time, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/runtime/invocation/next") {
			select {
			case first <- time.Now():
			default:
			}
			<-r.Context().Done() // hold it: the process is killed next
			return
		}
		if r.Header.Get("X-Amz-Target") == "secretsmanager.GetSecretValue" {
			// The functions that take internal requests read the internal
			// key at start: a real cold start pays this round trip too.
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			_, _ = io.WriteString(w, `{"Name":"bench","SecretString":"vo_internal_us_bench"}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(slices.Clone(env), "AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(), "AWS_ENDPOINT_URL=http://"+ln.Addr().String())
	if traced {
		cmd.Env = append(cmd.Env, "GODEBUG=inittrace=1")
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	exited := make(chan error, 1)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	go func() { exited <- cmd.Wait() }()
	select {
	case t := <-first:
		_ = cmd.Process.Kill()
		<-exited
		return t.Sub(t0), stderr.String(), nil
	case err := <-exited:
		return 0, stderr.String(), fmt.Errorf("exited before asking for an event (%v): %s", err, lastLine(stderr.String()))
	case <-ctx.Done():
		<-exited
		return 0, stderr.String(), errors.New("no request to the Runtime API within 20 s")
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// initTotal sums the "ms clock" of every inittrace line.
func initTotal(stderr string) time.Duration {
	var total float64
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		// init <pkg> @<t> ms, <clock> ms clock, <n> bytes, <n> allocs
		if len(f) >= 7 && f[0] == "init" && f[6] == "clock," {
			if v, err := strconv.ParseFloat(f[4], 64); err == nil {
				total += v
			}
		}
	}
	return time.Duration(math.Round(total * float64(time.Millisecond)))
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// --- formatting -------------------------------------------------------------------

func num(v float64) string {
	switch {
	case v == 0:
		return "-"
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

func ms(ns float64) string {
	if ns == 0 {
		return "-"
	}
	return strconv.FormatFloat(ns/1e6, 'f', 2, 64)
}

func num2(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func mib(bytes float64) string { return strconv.FormatFloat(bytes/(1<<20), 'f', 2, 64) }

// abSpread is an abbench result's ratio: the median of the work's time
// over its baseline's in the same round, with its extremes and
// interquartile range.
func abSpread(r result) string {
	if r["x-base-p50"] == 0 {
		return "-"
	}
	return spread{r["x-base-min"], r["x-base-p25"], r["x-base-p50"], r["x-base-p75"], r["x-base-max"]}.String()
}

func ratio(v, base float64) string {
	if v == 0 || base == 0 {
		return "-"
	}
	return strconv.FormatFloat(v/base, 'f', 2, 64)
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute averages: how busy
// the machine was, which every timing here depends on.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
