package launcher

import (
	"context"
	"sync"
	"time"
)

// backoffPolicy says how long the launcher waits before a restart: the
// first restart of a component waits min, each next one twice as long up
// to max; a process that ran reset or longer before it exited starts again
// after min.
type backoffPolicy struct{ min, max, reset time.Duration }

// restartBackoff is the launcher's policy (a variable for tests).
var restartBackoff = backoffPolicy{min: time.Second, max: 30 * time.Second, reset: time.Minute}

// notReadyGrace is how long a restarted process that did not become ready
// may take to stop before it is killed and started again.
const notReadyGrace = 10 * time.Second

// supervised is a component the launcher keeps running: its current
// process, replaced on each restart.
type supervised struct {
	comp Component
	mu   sync.Mutex
	cur  *started
}

func (s *supervised) current() *started {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (s *supervised) set(p *started) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur = p
}

// supervise starts the component again, with the same arguments (the same
// ports and data), each time its process exits, until ctx ends. It skips
// BeforeStart and AfterReady, whose work (credentials, bootstrap) outlives
// the process, and runs AfterRestart once the new process is ready. Each
// restart is one line in the log and counts in the status file.
func (c *Config) supervise(ctx context.Context, logs *logStream, status *statusWriter, s *supervised) {
	say := func(format string, args ...any) { logs.printf("launcher", format, args...) }
	policy := restartBackoff
	backoff, restarts := policy.min, 0
	// attempt is when the current process was started, or the last start
	// failed (then the current process is the old, exited one).
	attempt := s.current().proc.Started()
	for {
		p := s.current()
		select {
		case <-ctx.Done():
			return
		case <-p.proc.Exited():
		}
		if time.Since(attempt) >= policy.reset {
			backoff = policy.min
		}
		restarts++
		reason := p.exitReason()
		say("%s (pid %d) exited (%s): restart %d in %s", s.comp.Name, p.proc.PID(), reason, restarts, backoff)
		c.setStatus(status, s.comp.Name, func(cs *ComponentStatus) {
			cs.State, cs.LastExit, cs.Restarts = StateBackoff, reason, restarts
		})
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, policy.max)
		attempt = time.Now()
		np, err := c.launch(logs, s.comp)
		if err != nil {
			say("%s: %v", s.comp.Name, err)
			continue // the old process stays the current one: it has exited, so the next round waits longer
		}
		s.set(np)
		c.setStatus(status, s.comp.Name, func(cs *ComponentStatus) { cs.State, cs.PID = StateStarting, np.proc.PID() })
		if err := c.awaitReady(ctx, s.comp, np); err != nil {
			if ctx.Err() != nil {
				return
			}
			say("%s did not become ready after restart %d: %v", s.comp.Name, restarts, err)
			if np.proc.Running() {
				_ = np.proc.Stop(notReadyGrace)
			}
			continue
		}
		if s.comp.AfterRestart != nil {
			if err := s.comp.AfterRestart(ctx); err != nil {
				say("%s: after restart %d: %v", s.comp.Name, restarts, err)
			}
		}
		c.setStatus(status, s.comp.Name, func(cs *ComponentStatus) { cs.State = StateRunning })
	}
}

// setStatus updates a component's status entry, logging a failed write.
func (c *Config) setStatus(status *statusWriter, name string, f func(*ComponentStatus)) {
	if err := status.update(name, func(cs *ComponentStatus) { f(cs); cs.Since = time.Now() }); err != nil {
		c.logf("launcher", "writing %s: %v", c.StatusFile(), err)
	}
}
