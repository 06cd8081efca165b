// Command fakerie stands in for the Lambda RIE in the runner's tests: it
// starts a child process, as the RIE starts the function's bootstrap,
// writes the child's PID to child.pid in its working directory, and
// listens on --runtime-interface-emulator-address until it is killed.
package main

import (
	"flag"
	"net"
	"os"
	"os/exec"
	"strconv"
)

func main() {
	addr := flag.String("runtime-interface-emulator-address", "", "")
	flag.String("runtime-api-address", "", "")
	flag.String("log-level", "", "")
	flag.Parse()
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		panic(err)
	}
	if err := os.WriteFile("child.pid", []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
		panic(err)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		panic(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			panic(err)
		}
		c.Close()
	}
}
