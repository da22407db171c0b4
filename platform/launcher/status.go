package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// StatusFileName is the launcher's status file in the root directory:
// each component's pid, state and restart count, rewritten on every
// change (see `meshplane-platform status`).
const StatusFileName = "status.json"

// Component states in the status file.
const (
	StateStarting = "starting" // started, not ready yet
	StateRunning  = "running"  // ready
	StateBackoff  = "backoff"  // exited; waiting to be started again
	StateStopped  = "stopped"  // stopped with the launcher
)

// Status is the content of the status file.
type Status struct {
	// LauncherPID is the launcher's process id.
	LauncherPID int `json:"launcherPid"`
	// Stopped is set once the launcher stopped every component.
	Stopped bool `json:"stopped,omitempty"`
	// Components in start order.
	Components []ComponentStatus `json:"components"`
}

// ComponentStatus is one component's entry.
type ComponentStatus struct {
	Name string `json:"name"`
	// PID of the current (or last) process.
	PID   int    `json:"pid"`
	State string `json:"state"`
	// Restarts counts the times the launcher started it again after it
	// exited on its own.
	Restarts int `json:"restarts"`
	// Since is when the component entered State.
	Since time.Time `json:"since"`
	// LastExit says how its last process ended ("" while none did).
	LastExit string `json:"lastExit,omitempty"`
}

// StatusFile is the path of the status file.
func (c *Config) StatusFile() string { return filepath.Join(c.RootDir, StatusFileName) }

// statusWriter keeps the status and writes it on each change.
type statusWriter struct {
	mu     sync.Mutex
	path   string
	status Status
}

func newStatusWriter(path string, comps []Component) *statusWriter {
	w := &statusWriter{path: path, status: Status{LauncherPID: os.Getpid()}}
	for _, comp := range comps {
		w.status.Components = append(w.status.Components, ComponentStatus{Name: comp.Name})
	}
	return w
}

// update changes component name's entry with f and writes the file.
func (w *statusWriter) update(name string, f func(*ComponentStatus)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.status.Components {
		if w.status.Components[i].Name == name {
			f(&w.status.Components[i])
		}
	}
	return w.write()
}

// stopped marks the launcher and every component that ran stopped.
func (w *statusWriter) stopped() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status.Stopped = true
	for i := range w.status.Components {
		if c := &w.status.Components[i]; c.State != "" {
			c.State, c.Since = StateStopped, time.Now()
		}
	}
	return w.write()
}

func (w *statusWriter) write() error {
	b, err := json.MarshalIndent(w.status, "", "  ")
	if err != nil {
		return err
	}
	tmp := w.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, w.path)
}

// ReadStatus reads the status file of the platform in rootDir.
func ReadStatus(rootDir string) (*Status, error) {
	b, err := os.ReadFile(filepath.Join(rootDir, StatusFileName))
	if err != nil {
		return nil, err
	}
	s := &Status{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(rootDir, StatusFileName), err)
	}
	return s, nil
}

// Find returns the entry of component name.
func (s *Status) Find(name string) (ComponentStatus, bool) {
	for _, c := range s.Components {
		if c.Name == name {
			return c, true
		}
	}
	return ComponentStatus{}, false
}

// ErrNotRunning is PrintStatus's answer when the platform or one of its
// components is not running.
var ErrNotRunning = errors.New("not running")

// PrintStatus writes a table of the platform's components in rootDir to
// out. It returns ErrNotRunning (after the table) when the launcher is
// gone or a component is not running.
func PrintStatus(rootDir string, out io.Writer) error {
	s, err := ReadStatus(rootDir)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(out, "no platform has run in %s\n", rootDir)
		return ErrNotRunning
	}
	if err != nil {
		return err
	}
	alive := !s.Stopped && syscall.Kill(s.LauncherPID, 0) == nil
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tPID\tSTATE\tRESTARTS\tSINCE\tLAST EXIT")
	allRunning := true
	for _, c := range s.Components {
		state := c.State
		if state == "" {
			state = "not started"
		}
		if !alive && state != StateStopped {
			state += " (launcher gone)"
		}
		if c.State != StateRunning {
			allRunning = false
		}
		since := ""
		if !c.Since.IsZero() {
			since = c.Since.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", c.Name, c.PID, state, c.Restarts, since, c.LastExit)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case !alive:
		fmt.Fprintf(out, "the launcher (pid %d) is not running\n", s.LauncherPID)
		return ErrNotRunning
	case !allRunning:
		return ErrNotRunning
	}
	return nil
}
