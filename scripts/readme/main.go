// Command readme runs the shell blocks of the README and of the pages of
// docs/, in reading order, as a user pasting them would, and fails on any
// command that fails or prints something other than what the page shows.
// The rules it follows are in CONTRIBUTING.md ("The walkthroughs").
//
//	go run ./scripts/readme [-readme README.md] [-docs docs] [-list] [-timeout 10m]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "readme:", err)
			os.Exit(1)
		}
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("readme", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: go run ./scripts/readme [flags]

Runs every `+"```sh"+` block of the README and then of the pages of docs/, in
reading order (the README, docs/README.md, the pages it links in the order
it links them, then any other page under docs/ by path), in one bash
session at the repository root, and fails on the first command that exits
non-zero or prints something other than the "#> " output the page shows
for it. Blocks after <!-- readme: skip REASON --> are not run. The fixed
loopback ports of the blocks (127.0.0.1:NNNN, moto_server -p NNNN) are
replaced by free ones. The rules are in CONTRIBUTING.md.

Example:
  go run ./scripts/readme            # run the README and docs/ (a minute or two)
  go run ./scripts/readme -list      # which blocks run, and why others do not
  go run ./scripts/readme -docs ''   # the README alone

Flags:
`)
		fs.PrintDefaults()
	}
	path := fs.String("readme", "README.md", "the Markdown `FILE` to run first; its directory is the repository root")
	docsDir := fs.String("docs", "docs", "the `DIR` (relative to the README's) whose pages run after it; empty: none")
	list := fs.Bool("list", false, "list the blocks and their commands without running them")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	stepTimeout := fs.Duration("step-timeout", 2*time.Minute, "fail a command that runs longer than this (a wait that never ends)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root := filepath.Dir(*path)
	docs, err := Documents(root, filepath.Base(*path), *docsDir)
	if err != nil {
		return err
	}
	blocks, err := ParseAll(root, docs)
	if err != nil {
		return err
	}
	if *list {
		for _, b := range blocks {
			state := fmt.Sprintf("runs, %d commands", len(b.Commands))
			if b.Skip != "" {
				state = "skipped: " + b.Skip
			}
			fmt.Fprintf(stdout, "%s:%d (%s): %s\n", b.File, b.Line, b.Heading, state)
		}
		return nil
	}
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("the walkthroughs' commands need %s on PATH", tool)
		}
	}
	ports, err := freePorts(blocks)
	if err != nil {
		return err
	}
	script, cmds := Script(blocks, ports)
	// The walkthroughs write creds.json at the root like a user would; a
	// developer's own is put back afterwards.
	restore := keepFile(filepath.Join(root, "creds.json"))
	defer restore()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	out, runErr := runBash(ctx, root, script, *stepTimeout)
	steps := splitSteps(out)
	// Every command that ran printed its mark: a missing one means the
	// runner cut a command it should not have.
	for i := range cmds {
		if _, ok := steps[i]; !ok {
			if _, later := steps[i+1]; later {
				return fmt.Errorf("%s:%d: this command's output was lost: the runner cut it wrongly (a compound command over several lines?)", cmds[i].File, cmds[i].Line)
			}
		}
	}
	checked := map[string]int{}
	for i, c := range cmds {
		got, ran := steps[i]
		if !ran {
			break
		}
		if c.Expect == nil {
			continue
		}
		// The last command that ran failed: its exit is the failure.
		if _, next := steps[i+1]; !next && runErr != nil {
			break
		}
		checked[c.File]++
		if !Matcher(c.Expect).MatchString(Normalize(got)) {
			return fmt.Errorf("%s:%d: the output is not what the page shows\n%s\n--- the page shows\n%s\n--- printed\n%s",
				c.File, c.Line, indent(c.Text), strings.Join(c.Expect, "\n"), Normalize(got))
		}
	}
	if runErr != nil {
		last := len(steps) - 1
		if last < 0 || last >= len(cmds) {
			return fmt.Errorf("bash: %v\n%s", runErr, out)
		}
		c := cmds[last]
		return fmt.Errorf("%s:%d: the command failed (%v)\n%s\n--- printed\n%s", c.File, c.Line, runErr, indent(c.Text), Normalize(steps[last]))
	}
	fmt.Fprint(stdout, Summary(docs, blocks, checked, time.Since(start)))
	return nil
}

// Summary is a line per document (its blocks run and skipped, commands,
// outputs checked) and the totals.
func Summary(docs []string, blocks []Block, checked map[string]int, took time.Duration) string {
	type count struct{ ran, skipped, cmds int }
	per := map[string]*count{}
	var total count
	for _, b := range blocks {
		c := per[b.File]
		if c == nil {
			c = &count{}
			per[b.File] = c
		}
		if b.Skip != "" {
			c.skipped++
			total.skipped++
			continue
		}
		c.ran++
		c.cmds += len(b.Commands)
		total.ran++
		total.cmds += len(b.Commands)
	}
	var s strings.Builder
	all := 0
	for _, d := range docs {
		c := per[d]
		if c == nil {
			fmt.Fprintf(&s, "readme: %s: no sh blocks\n", d)
			continue
		}
		all += checked[d]
		fmt.Fprintf(&s, "readme: %s: %d blocks run (%d commands, %d outputs checked), %d skipped\n", d, c.ran, c.cmds, checked[d], c.skipped)
	}
	fmt.Fprintf(&s, "readme: %d documents: %d blocks run (%d commands, %d outputs checked), %d skipped, in %s\n",
		len(docs), total.ran, total.cmds, all, total.skipped, took.Round(time.Second))
	return s.String()
}

// stepMark starts each command's output in the session's output.
const stepMark = "\x1ereadme-step "

// Script is the bash session of the blocks that run, each command
// preceded by its mark, and the commands in order.
func Script(blocks []Block, ports map[string]string) (string, []Command) {
	var b strings.Builder
	// What a careful user's shell does: stop at the first failure, a
	// pipeline fails when any of its commands does. Background jobs are
	// ended at the end (the runner also ends the whole process group).
	b.WriteString("set -euo pipefail\nexec 2>&1\ntrap 'jobs -p | xargs -r kill 2>/dev/null || true' EXIT\n")
	var cmds []Command
	for _, bl := range blocks {
		if bl.Skip != "" {
			continue
		}
		for _, c := range bl.Commands {
			fmt.Fprintf(&b, "printf '\\n%s%d\\n'\n", strings.ReplaceAll(stepMark, "\x1e", `\036`), len(cmds))
			b.WriteString(Substitute(c.Text, ports))
			b.WriteString("\n")
			cmds = append(cmds, c)
		}
	}
	return b.String(), cmds
}

var (
	loopbackPort = regexp.MustCompile(`127\.0\.0\.1:(\d{2,5})\b`)
	motoPort     = regexp.MustCompile(`(moto_server[^\n]*-p )(\d{2,5})\b`)
)

// Substitute replaces the fixed ports of a command by the runner's free ones.
func Substitute(text string, ports map[string]string) string {
	text = loopbackPort.ReplaceAllStringFunc(text, func(m string) string {
		return "127.0.0.1:" + ports[strings.TrimPrefix(m, "127.0.0.1:")]
	})
	return motoPort.ReplaceAllStringFunc(text, func(m string) string {
		s := motoPort.FindStringSubmatch(m)
		return s[1] + ports[s[2]]
	})
}

// freePorts picks a free port for each fixed one the blocks name.
func freePorts(blocks []Block) (map[string]string, error) {
	ports := map[string]string{}
	for _, b := range blocks {
		if b.Skip != "" {
			continue
		}
		for _, c := range b.Commands {
			var found []string
			for _, m := range loopbackPort.FindAllStringSubmatch(c.Text, -1) {
				found = append(found, m[1])
			}
			for _, m := range motoPort.FindAllStringSubmatch(c.Text, -1) {
				found = append(found, m[2])
			}
			for _, p := range found {
				if _, ok := ports[p]; ok {
					continue
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					return nil, err
				}
				ports[p] = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
				// Closed at once: the port stays free for the command,
				// and the next Listen picks another.
				defer ln.Close()
			}
		}
	}
	return ports, nil
}

// runBash runs the script in its own process group, which is ended
// whole when the script ends, the time is up, or one command runs longer
// than stepTimeout.
func runBash(ctx context.Context, dir, script string, stepTimeout time.Duration) (string, error) {
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A background job left running keeps the output open: stop waiting
	// for it once bash is done (its group is ended below).
	cmd.WaitDelay = 2 * time.Second
	env := []string{}
	for _, kv := range os.Environ() {
		// The in-memory dev server of the walkthrough, not the tests' moto.
		if strings.HasPrefix(kv, "AWS_ENDPOINT_URL=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	out := &stepWriter{last: time.Now()}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var err error
	exited := false
wait:
	for {
		select {
		case err = <-done:
			exited = true
			break wait
		case <-ctx.Done():
			err = fmt.Errorf("timed out: %w", ctx.Err())
			break wait
		case <-tick.C:
			if d := out.sinceStep(); d > stepTimeout {
				err = fmt.Errorf("still running after %s (-step-timeout)", d.Round(time.Second))
				break wait
			}
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	if !exited {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	return out.String(), err
}

// stepWriter keeps the session's output and when the last step began.
type stepWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	last time.Time
}

func (w *stepWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(stepMark)) {
		w.last = time.Now()
	}
	return w.buf.Write(p)
}

func (w *stepWriter) sinceStep() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return time.Since(w.last)
}

func (w *stepWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// splitSteps cuts the session's output at the step marks.
func splitSteps(out string) map[int]string {
	steps := map[int]string{}
	parts := strings.Split(out, "\n"+stepMark)
	for _, p := range parts[1:] {
		n, rest, _ := strings.Cut(p, "\n")
		i, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		steps[i] = rest
	}
	return steps
}

// keepFile saves a file and returns what puts it back (or removes the
// file when there was none).
func keepFile(path string) func() {
	b, err := os.ReadFile(path)
	if err != nil {
		return func() { _ = os.Remove(path) }
	}
	st, _ := os.Stat(path)
	return func() { _ = os.WriteFile(path, b, st.Mode().Perm()) }
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
