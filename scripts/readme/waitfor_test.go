package main

import (
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The walkthroughs start servers in the background and wait for them with
// scripts/waitfor -pid: it must fail when the awaited process has died,
// even while another server answers at the URL.
func TestWaitforPID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	waitfor := func(args ...string) (string, time.Duration, error) {
		start := time.Now()
		out, err := exec.Command("../waitfor", args...).CombinedOutput()
		return string(out), time.Since(start), err
	}
	// A live process, a server answering: ready.
	live := exec.Command("sleep", "30")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	if out, _, err := waitfor("-pid", strconv.Itoa(live.Process.Pid), url); err != nil {
		t.Errorf("a live process and an answering URL: %v %s", err, out)
	}
	// The awaited process has exited (and been reaped): the old server
	// answering at the URL does not count.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if out, _, err := waitfor("-pid", strconv.Itoa(dead.Process.Pid), url); err == nil || !strings.Contains(out, "not running") {
		t.Errorf("a process that has exited: %v %q", err, out)
	}
	// It exits while waited for, nothing answering: fails at once, not
	// after the time limit.
	dying := exec.Command("sleep", "0.5")
	if err := dying.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = dying.Wait() }()
	out, took, err := waitfor("-t", "30", "-pid", strconv.Itoa(dying.Process.Pid), "http://127.0.0.1:1/")
	if err == nil || !strings.Contains(out, "exited before") || took > 10*time.Second {
		t.Errorf("a process that exits while waited for: %v %q after %s", err, out, took)
	}
	// A zombie (exited, not yet reaped by its parent) has exited too.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = zombie.Wait() }()
	time.Sleep(200 * time.Millisecond)
	if out, _, err := waitfor("-pid", strconv.Itoa(zombie.Process.Pid), url); err == nil {
		t.Errorf("an unreaped process that has exited: %v %q", err, out)
	}
	if out, _, err := waitfor("-pid", "x1", url); err == nil || !strings.Contains(out, "process ID") {
		t.Errorf("-pid x1: %v %q", err, out)
	}
	// Without -pid, as before: any answer will do.
	if out, _, err := waitfor(url); err != nil {
		t.Errorf("no -pid: %v %s", err, out)
	}
}
