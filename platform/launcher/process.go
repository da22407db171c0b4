package launcher

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/meshplane/meshplane/sdk/process"
)

// logStream serialises the lines of every component onto one writer, each
// prefixed with the component's name.
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

// lineWriter is a component's stdout and stderr: it cuts what the program
// writes into lines and hands each to the log stream.
type lineWriter struct {
	mu   sync.Mutex
	logs *logStream
	name string
	buf  bytes.Buffer
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // no newline yet: keep the rest for the next write
			w.buf.Reset()
			w.buf.WriteString(line)
			return len(p), nil
		}
		w.logs.printf(w.name, "%s", line[:len(line)-1])
	}
}

// started is a component whose process runs (or ran).
type started struct {
	name string
	proc *process.Process
}

// startComponent starts binary with args in dir; its output goes to the log
// stream. The kit's process gives it its own process group, killed with the
// launcher.
func startComponent(logs *logStream, name, dir, binary string, args, environ []string) (*started, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	if len(environ) > 0 {
		cmd.Env = append(os.Environ(), environ...)
	}
	out := &lineWriter{logs: logs, name: name}
	cmd.Stdout, cmd.Stderr = out, out
	p, err := process.StartProcess(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return &started{name: name, proc: p}, nil
}

// exitReason says how a component ended.
func (s *started) exitReason() string {
	if err := s.proc.ExitErr(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}
