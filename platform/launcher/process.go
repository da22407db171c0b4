package launcher

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is one supervised child: its output goes line by line to the
// shared log stream, each line prefixed with the component's name.
type process struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // valid once exited is closed
}

// logStream serialises the lines of every component onto one writer.
type logStream struct {
	mu  sync.Mutex
	out io.Writer
	pad int
}

func (l *logStream) printf(name, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, "%-*s | %s\n", l.pad, name, fmt.Sprintf(format, args...))
}

// copyLines prefixes every line read from r.
func (l *logStream) copyLines(name string, r io.Reader, done *sync.WaitGroup) {
	defer done.Done()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		l.printf(name, "%s", sc.Text())
	}
}

// startProcess starts binary with args in dir. The child gets its own
// process group and SIGTERM when the launcher dies, so no part of the
// platform outlives it.
func startProcess(logs *logStream, name, dir, binary string, args []string) (*process, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", name, binary, err)
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{})}
	var copying sync.WaitGroup
	copying.Add(2)
	go logs.copyLines(name, stdout, &copying)
	go logs.copyLines(name, stderr, &copying)
	go func() {
		copying.Wait() // Wait closes the pipes: read them to the end first
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and waits for the exit, killing the process group
// after grace.
func (p *process) stop(grace time.Duration) error {
	select {
	case <-p.exited:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", p.name, grace)
	}
}

// waitExit returns when the process exits or ctx ends.
func (p *process) waitExit(ctx context.Context) error {
	select {
	case <-p.exited:
		if p.err == nil {
			return errors.New("exited")
		}
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}
