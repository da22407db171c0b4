// Command pause is the sandbox (pod infrastructure) container's process: it
// holds the pod's namespaces open and sleeps until SIGTERM or SIGINT, then
// exits 0. Run as PID 1 it also reaps the children reparented to it
// (processes of a pod sharing its PID namespace whose parents exited), so
// they leave no zombies. Once its handlers are in place it writes
// "pause: ready" to stderr.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("meshplane pause")
		return
	}
	// A closed stderr must not kill the sandbox.
	signal.Ignore(syscall.SIGPIPE)
	children := make(chan os.Signal, 1)
	if os.Getpid() == 1 {
		signal.Notify(children, syscall.SIGCHLD)
		reap() // children that exited before the handler was in place
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	fmt.Fprintln(os.Stderr, "pause: ready")
	for {
		select {
		case <-stop:
			return
		case <-children:
			reap()
		}
	}
}

// reap collects every exited child without blocking.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
