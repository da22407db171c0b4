package sharding

import (
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	testingclock "k8s.io/utils/clock/testing"
)

func TestAnswerCache(t *testing.T) {
	clock := testingclock.NewFakeClock(time.Now())
	c := newAnswerCache(clock)
	spec := authorizationv1.SubjectAccessReviewSpec{User: "bob",
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "bind", Group: "apis.kcp.io", Resource: "apiexports", Name: "e"}}
	allowed, err := reviewKey("c1", true, spec)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := reviewKey("c1", false, spec)
	other, _ := reviewKey("c2", true, spec)
	spec.User = "alice"
	denied, _ := reviewKey("c1", true, spec)
	if allowed == plain || allowed == other || allowed == denied {
		t.Fatalf("keys of different reviews must differ: %q %q %q %q", allowed, plain, other, denied)
	}
	c.put(allowed, answer{decision: authorizer.DecisionAllow, reason: "yes"})
	c.put(denied, answer{decision: authorizer.DecisionNoOpinion, reason: "no"})
	for _, key := range []string{plain, other} {
		if _, ok := c.get(key); ok {
			t.Fatalf("%s: answered from another review's answer", key)
		}
	}
	if ans, ok := c.get(allowed); !ok || ans.decision != authorizer.DecisionAllow || ans.reason != "yes" {
		t.Fatalf("allowed answer: got %+v, %v", ans, ok)
	}

	clock.Step(DeniedTTL + time.Millisecond)
	if _, ok := c.get(denied); ok {
		t.Fatalf("a refusal kept longer than %s", DeniedTTL)
	}
	if _, ok := c.get(allowed); !ok {
		t.Fatalf("an allow dropped before %s", AllowedTTL)
	}
	clock.Step(AllowedTTL)
	if _, ok := c.get(allowed); ok {
		t.Fatalf("an allow kept longer than %s", AllowedTTL)
	}
}
