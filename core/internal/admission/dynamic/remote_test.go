package dynamic

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// shardReplica is a Remote over objects held in the test: another
// shard's replica, synced or not.
type shardReplica struct {
	mu       sync.Mutex
	synced   bool
	objs     map[string][]any // resource/cluster -> objects
	handlers map[string][]func(obj any, deleted bool)
}

func (r *shardReplica) Objects(resource, cluster string) ([]any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.synced {
		return nil, errors.New("not synced")
	}
	return r.objs[resource+"/"+cluster], nil
}

func (r *shardReplica) OnChange(resource string, f func(obj any, deleted bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers[resource] = append(r.handlers[resource], f)
}

// set replaces a cluster's objects of resource (deleted: removes them)
// and tells the handlers.
func (r *shardReplica) set(resource, cluster string, deleted bool, objs ...any) {
	r.mu.Lock()
	r.synced = true
	r.objs[resource+"/"+cluster] = objs
	if deleted {
		delete(r.objs, resource+"/"+cluster)
	}
	hs := r.handlers[resource]
	r.mu.Unlock()
	for _, h := range hs {
		for _, o := range objs {
			h(o, deleted)
		}
	}
}

// TestPoliciesOfAnotherShard: the policies of a hook cluster another
// shard holds come from its replica; until that replica has synced a
// request is refused with a retryable 503, never admitted without them.
func TestPoliciesOfAnotherShard(t *testing.T) {
	defer func(d time.Duration) { waitForRemote = d }(waitForRemote)
	waitForRemote = 50 * time.Millisecond
	f := newFixture(t)
	remote := &shardReplica{objs: map[string][]any{}, handlers: map[string][]func(any, bool){}}
	f.source.WithRemote(remote)
	p := newPolicies(f.source, nil, policyKind[*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding, string]{
		policies: f.vap, bindings: f.vapb, policyResource: "validatingadmissionpolicies", bindingResource: "validatingadmissionpolicybindings",
		compile: func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string {
			return p.Name + "@" + p.ResourceVersion
		},
		defaultPolicy: defaultedValidatingPolicy, defaultBinding: defaultedValidatingBinding,
		policyName: func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Spec.PolicyName },
		paramKind: func(*admissionregistrationv1.ValidatingAdmissionPolicy) *admissionregistrationv1.ParamKind {
			return nil
		},
	})
	f.run(t)

	_, err := p.hooks(t.Context(), "provider")
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusServiceUnavailable || status.Status().Details.RetryAfterSeconds == 0 {
		t.Fatalf("hooks of a cluster whose shard's replica has not synced: %v; want a retryable 503", err)
	}

	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: objMeta("provider", "", "system-only", "p1")}
	remote.set("validatingadmissionpolicybindings", "provider", false, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: objMeta("provider", "", "system-only", "b1"),
		Spec:       admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "system-only"}})
	remote.set("validatingadmissionpolicies", "provider", false, policy)
	hooks := mustHooks(t, p, "provider")
	if len(hooks) != 1 || hooks[0].Evaluator != "system-only@1" || len(hooks[0].Bindings) != 1 {
		t.Fatalf("hooks of the cluster on another shard: %+v; want its policy with its binding", hooks)
	}

	remote.set("validatingadmissionpolicies", "provider", true, policy)
	p.mu.Lock()
	n := len(p.compiled)
	p.mu.Unlock()
	if n != 0 {
		t.Errorf("a policy deleted on the other shard stays compiled")
	}
	if hooks := mustHooks(t, p, "provider"); hooks != nil {
		t.Errorf("hooks after the policy went: %+v", hooks)
	}
}
