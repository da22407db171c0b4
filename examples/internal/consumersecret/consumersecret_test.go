package consumersecret

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestClassify(t *testing.T) {
	secrets := schema.GroupResource{Resource: "secrets"}
	for name, tc := range map[string]struct {
		err   error
		claim bool
	}{
		"forbidden (claim rejected)": {apierrors.NewForbidden(secrets, "x", errors.New("neither exported nor an accepted permission claim")), true},
		"resource not served":        {apierrors.NewNotFound(schema.GroupResource{}, ""), true},
		"the Secret is missing":      {apierrors.NewNotFound(secrets, "x"), false},
		"conflict":                   {apierrors.NewConflict(secrets, "x", errors.New("stale")), false},
		"method not supported":       {apierrors.NewMethodNotSupported(secrets, "create"), true},
	} {
		got := classify(tc.err)
		if errors.Is(got, ErrClaimNotAccepted) != tc.claim || !errors.Is(got, tc.err) {
			t.Errorf("%s: classify = %v, claim %v", name, got, tc.claim)
		}
	}
	if classify(nil) != nil {
		t.Error("classify(nil) != nil")
	}
	if !objectNotFound(apierrors.NewNotFound(secrets, "x")) || objectNotFound(errors.New("plain")) {
		t.Error("objectNotFound")
	}
}
