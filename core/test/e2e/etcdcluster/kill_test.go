package etcdcluster

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
	"github.com/meshplane/meshplane/sdk/testing/pki"
)

// writers is the number of clients writing at once.
const writers = 8

// maxWritesPerWriter bounds the test's writes.
const maxWritesPerWriter = 2000

// TestEtcdMemberKilledUnderLoad SIGKILLs an etcd member, a follower and
// then the leader, while 8 clients create configmaps through the core, and
// restarts it each time. Writes may fail only from the kill until the
// cluster has a leader again and every client has had a write through;
// after that none fails, through the member's restart too. Every
// acknowledged write is read back at the end, and the cluster is back to
// 3 healthy members after each restart. The window in which writes failed
// is printed, not asserted on.
func TestEtcdMemberKilledUnderLoad(t *testing.T) {
	members, ca, client := startCluster(t)
	s := startCore(t, members, ca, client)
	org := s.CreateOrg(t, "etcdkill")
	cs, err := kubernetes.NewForConfig(s.RESTConfig(t, org.Path))
	if err != nil {
		t.Fatal(err)
	}
	ec := etcdClient(t, members, ca, client)

	l := &load{cms: cs.CoreV1().ConfigMaps("default"), stop: make(chan struct{})}
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.write(i)
		}()
	}
	stopped := false
	stopWriters := func() {
		if !stopped {
			stopped = true
			close(l.stop)
			wg.Wait()
		}
	}
	defer stopWriters()

	l.waitEach(t, time.Now(), 5, "writes before any kill")
	if f := l.failuresIn(time.Time{}, time.Now()); len(f) > 0 {
		t.Fatalf("%d writes failed with all members up: %v", len(f), f[0])
	}
	for _, role := range []string{"follower", "leader"} {
		lead := leader(t, members, ca, client)
		victim := lead
		if role == "follower" {
			victim = members[(indexOf(members, lead)+1)%len(members)]
		}
		killed := time.Now()
		if err := victim.proc.Kill(); err != nil {
			t.Fatalf("SIGKILL of etcd member %s: %v", victim.name, err)
		}
		elected := killed
		if role == "leader" {
			var newLeader *member
			framework.Eventually(t, time.Minute, 20*time.Millisecond, "a new etcd leader", func() (bool, string) {
				m, err := liveLeader(ec, members, victim)
				newLeader = m
				return err == nil, fmt.Sprint(err)
			})
			elected = time.Now()
			t.Logf("etcd leader %s killed; %s leads %v later", victim.name, newLeader.name, elected.Sub(killed).Round(time.Millisecond))
		}
		// Every client has a write through after the election: from here
		// on, no write may fail.
		l.waitEach(t, elected, 1, "a write of every client after the "+role+" "+victim.name+" was killed")
		settled := time.Now()
		l.waitEach(t, settled, 10, "writes with the "+role+" down")

		victim.start(t)
		waitHealthy(t, ec, members, victim)
		healthy := time.Now()
		l.waitEach(t, healthy, 10, "writes after "+victim.name+" rejoined")

		during := l.failuresIn(killed, settled)
		if after := l.failuresIn(settled, time.Now()); len(after) > 0 {
			t.Fatalf("%d writes failed after the cluster had settled from the %s's kill (first: %v)", len(after), role, after[0])
		}
		window := time.Duration(0)
		for _, f := range during {
			window = max(window, f.end.Sub(killed))
		}
		// The figures of the failure window, printed for the record.
		fmt.Printf("etcd %s %s SIGKILLed under %d writers: %d writes failed, the last ending %v after the kill; the slowest acknowledged write took %v (new leader after %v; every client through again after %v); %s back and caught up %v later, no write failed from then on\n",
			role, victim.name, writers, len(during), window.Round(time.Millisecond), l.slowestIn(killed.Add(-10*time.Second), settled).Round(time.Millisecond),
			elected.Sub(killed).Round(time.Millisecond), settled.Sub(killed).Round(time.Millisecond), victim.name, healthy.Sub(settled).Round(time.Millisecond))
		for i, f := range during {
			if i == 3 {
				break
			}
			t.Logf("a failed write: %v", f)
		}
	}
	stopWriters()

	acked := l.acknowledged()
	list, err := l.cms.List(framework.CallContext(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, cm := range list.Items {
		have[cm.Name] = cm.Data["n"] == cm.Name
	}
	var lost []string
	for _, name := range acked {
		if !have[name] {
			lost = append(lost, name)
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		t.Fatalf("%d of %d acknowledged writes are missing or wrong: %v", len(lost), len(acked), lost)
	}
	fmt.Printf("etcd member kills: all %d acknowledged writes of %d clients read back\n", len(acked), writers)
}

// span is when a write started and when it was answered.
type span struct{ start, end time.Time }

// attempt is one failed write.
type attempt struct {
	writer     int
	name       string
	start, end time.Time
	err        string
}

func (a attempt) String() string {
	return fmt.Sprintf("writer %d, %s, %v: %s", a.writer, a.name, a.end.Sub(a.start).Round(time.Millisecond), a.err)
}

// load is writers clients creating configmaps, each one at a time.
type load struct {
	cms  typedcorev1.ConfigMapInterface
	stop chan struct{}

	mu       sync.Mutex
	acked    []string
	ackedAt  [writers][]span // each acknowledged write
	failures []attempt
}

// write creates configmaps w<i>-<n> until stopped, retrying a name until
// the core acknowledges it (an AlreadyExists on a retry means the earlier
// attempt was written).
func (l *load) write(i int) {
	for n := 0; n < maxWritesPerWriter; {
		select {
		case <-l.stop:
			return
		default:
		}
		name := fmt.Sprintf("w%d-%d", i, n)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := l.cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": name}}, metav1.CreateOptions{})
		cancel()
		l.mu.Lock()
		if err == nil || apierrors.IsAlreadyExists(err) {
			l.acked = append(l.acked, name)
			l.ackedAt[i] = append(l.ackedAt[i], span{start, time.Now()})
			n++
		} else {
			l.failures = append(l.failures, attempt{writer: i, name: name, start: start, end: time.Now(), err: err.Error()})
		}
		l.mu.Unlock()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// waitEach waits until every writer has k acknowledged writes started
// after since.
func (l *load) waitEach(t *testing.T, since time.Time, k int, what string) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, 20*time.Millisecond, what, func() (bool, string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		least := -1
		for i := range writers {
			c := 0
			for _, at := range l.ackedAt[i] {
				if !at.start.Before(since) {
					c++
				}
			}
			if least < 0 || c < least {
				least = c
			}
		}
		return least >= k, fmt.Sprintf("the slowest writer has %d of %d, %d failures in all", least, k, len(l.failures))
	})
}

// failuresIn are the failed writes started in [from, to).
func (l *load) failuresIn(from, to time.Time) []attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []attempt
	for _, f := range l.failures {
		if !f.start.Before(from) && f.start.Before(to) {
			out = append(out, f)
		}
	}
	return out
}

// slowestIn is the longest acknowledged write started in [from, to).
func (l *load) slowestIn(from, to time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for i := range writers {
		for _, at := range l.ackedAt[i] {
			if !at.start.Before(from) && at.start.Before(to) {
				d = max(d, at.end.Sub(at.start))
			}
		}
	}
	return d
}

func (l *load) acknowledged() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.acked...)
}

// etcdClient is a client of all members, closed when the test ends.
func etcdClient(t *testing.T, members []*member, ca *pki.CA, client pki.Pair) *clientv3.Client {
	t.Helper()
	tlsConfig, err := (transport.TLSInfo{CertFile: client.CertFile, KeyFile: client.KeyFile, TrustedCAFile: ca.CertFile}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, m := range members {
		urls = append(urls, m.clientURL)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: urls, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// liveLeader is the member that the members other than down agree leads.
func liveLeader(c *clientv3.Client, members []*member, down *member) (*member, error) {
	var lead uint64
	byID := map[uint64]*member{}
	for _, m := range members {
		if m == down {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		st, err := c.Status(ctx, m.clientURL)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("status of %s: %w", m.name, err)
		}
		byID[st.Header.MemberId] = m
		if st.Leader == 0 || lead != 0 && st.Leader != lead {
			return nil, fmt.Errorf("%s sees leader %x, another sees %x", m.name, st.Leader, lead)
		}
		lead = st.Leader
	}
	if m := byID[lead]; m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("leader %x is not a live member", lead)
}

// waitHealthy waits until the cluster has its 3 members again, all answer
// with no errors or alarms and agree on a leader, and back has applied
// everything the leader had committed when it answered.
func waitHealthy(t *testing.T, c *clientv3.Client, members []*member, back *member) {
	t.Helper()
	framework.Eventually(t, 2*time.Minute, 100*time.Millisecond, "etcd back to 3 healthy members after "+back.name+" restarted", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		ml, err := c.MemberList(ctx)
		if err != nil {
			return false, err.Error()
		}
		if len(ml.Members) != 3 {
			return false, fmt.Sprintf("%d members", len(ml.Members))
		}
		lead, err := liveLeader(c, members, nil)
		if err != nil {
			return false, err.Error()
		}
		alarms, err := c.AlarmList(ctx)
		if err != nil || len(alarms.Alarms) > 0 {
			return false, fmt.Sprintf("alarms %v (%v)", alarms, err)
		}
		ls, err := c.Status(ctx, lead.clientURL)
		if err != nil {
			return false, err.Error()
		}
		bs, err := c.Status(ctx, back.clientURL)
		if err != nil {
			return false, err.Error()
		}
		if len(ls.Errors) > 0 || len(bs.Errors) > 0 {
			return false, fmt.Sprintf("errors: %v %v", ls.Errors, bs.Errors)
		}
		return bs.RaftAppliedIndex >= ls.RaftIndex, fmt.Sprintf("%s applied %d, leader %s at %d", back.name, bs.RaftAppliedIndex, lead.name, ls.RaftIndex)
	})
}

func indexOf(members []*member, m *member) int {
	for i, x := range members {
		if x == m {
			return i
		}
	}
	return -1
}
