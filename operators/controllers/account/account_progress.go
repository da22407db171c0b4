package account

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
)

// progressHold is how long a status that only reports progress is held
// back for one Account after its first reconcile: an Account that becomes
// Ready within it gets one status write (Ready); one that waits longer shows
// where it waits. Each progress write doubles the hold, up to
// maxProgressHold: an Account slowed by a busy platform does not write
// more for being slow.
const (
	progressHold    = 5 * time.Second
	maxProgressHold = 30 * time.Second
)

// progressWrites holds back the status writes that only report progress
// (each step's Pending message as the Account moves along): every write is
// decoded, stored and sent to every watcher of Accounts by the core, and
// each used to cost a write per step. A failure (a condition with reason
// Error), the end of one, and Ready (or its loss) are written at once; the
// rest at most once per hold for each Account, counted from the first
// reconcile this process ran for it, doubling after each.
type progressWrites struct {
	hold, maxHold time.Duration
	now           func() time.Time

	mu sync.Mutex
	// last is, for each Account (cluster/name), when it was first
	// reconciled or last had its progress written, and the hold from then.
	last map[string]progressHeld
}

type progressHeld struct {
	at   time.Time
	hold time.Duration
}

func newProgressWrites(hold, maxHold time.Duration) *progressWrites {
	return &progressWrites{hold: hold, maxHold: maxHold, now: time.Now, last: map[string]progressHeld{}}
}

// due reports whether the Account's progress may be written now, and if
// not, how long until it may.
func (p *progressWrites) due(key string) (bool, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	last, ok := p.last[key]
	if !ok {
		last = progressHeld{at: now, hold: p.hold}
		p.last[key] = last
	}
	if wait := last.at.Add(last.hold).Sub(now); wait > 0 {
		return false, wait
	}
	p.last[key] = progressHeld{at: now, hold: min(2*last.hold, p.maxHold)}
	return true, 0
}

// forget drops an Account that is Ready, failing, or gone.
func (p *progressWrites) forget(key string) {
	p.mu.Lock()
	delete(p.last, key)
	p.mu.Unlock()
}

// progressOnly reports whether going from before to after only reports
// progress: in both, Ready is not True and every step not done is Pending
// (none failed).
func progressOnly(before, after *corev1alpha1.AccountStatus) bool {
	return inProgress(before) && inProgress(after)
}

func inProgress(s *corev1alpha1.AccountStatus) bool {
	for _, c := range s.Conditions {
		switch {
		case c.Type == corev1alpha1.ConditionReady && c.Status == metav1.ConditionTrue:
			return false
		case c.Status != metav1.ConditionTrue && c.Reason != corev1alpha1.ReasonPending:
			return false
		}
	}
	return true
}
