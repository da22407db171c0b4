package permissionclaimlabel

import (
	"context"
	"errors"
	"testing"
	"time"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshplane/meshplane/core/internal/apiexport"
)

// claimsOf returns, through a real Consumers, the claims of one binding
// that accepted configmaps with selector.
func claimsOf(t *testing.T, selector apisv1alpha2.PermissionClaimSelector) []apiexport.Claim {
	t.Helper()
	c := apiexport.NewConsumers()
	c.Set("cons", "b", "prov", "ex")
	c.SetClaims("cons", "b", "prov", "ex", []apisv1alpha2.ScopedPermissionClaim{{
		PermissionClaim: apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}, Verbs: []string{"get"}},
		Selector:        selector,
	}})
	return c.ClaimsOn("cons", schema.GroupResource{Resource: "configmaps"})
}

func TestLabelsReconciler(t *testing.T) {
	picked := claimsOf(t, apisv1alpha2.PermissionClaimSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}})
	key, value := picked[0].Label()
	for _, tc := range []struct {
		name        string
		claims      []apiexport.Claim
		served      bool
		objects     map[string]map[string]string // name -> labels
		setErr      error
		want        map[string]map[string]string // name -> labels written
		wantRequeue bool
		wantErr     bool
	}{
		{name: "picked object labelled, other left alone", claims: picked, served: true,
			objects: map[string]map[string]string{"a": {"app": "x"}, "b": {"app": "y"}},
			want:    map[string]map[string]string{"a": {"app": "x", key: value}}},
		{name: "claim gone: label removed", served: true,
			objects: map[string]map[string]string{"a": {"app": "x", key: value}},
			want:    map[string]map[string]string{"a": {"app": "x"}}},
		{name: "already labelled: no write", claims: picked, served: true,
			objects: map[string]map[string]string{"a": {"app": "x", key: value}}, want: map[string]map[string]string{}},
		{name: "resource not served yet: retry", claims: picked, wantRequeue: true, want: map[string]map[string]string{}},
		{name: "not served and nothing claimed: done", want: map[string]map[string]string{}},
		{name: "write fails: error", claims: picked, served: true, setErr: errors.New("conflict"),
			objects: map[string]map[string]string{"a": {"app": "x"}}, wantErr: true, want: map[string]map[string]string{}},
	} {
		written := map[string]map[string]string{}
		r := &labelsReconciler{
			claims: func(string, schema.GroupResource) []apiexport.Claim { return tc.claims },
			list: func(context.Context, string, schema.GroupResource) ([]Object, bool, error) {
				var out []Object
				for name, labels := range tc.objects {
					name := name
					out = append(out, Object{Name: name, Labels: labels, SetLabels: func(_ context.Context, l map[string]string) error {
						if tc.setErr != nil {
							return tc.setErr
						}
						written[name] = l
						return nil
					}})
				}
				return out, tc.served, nil
			},
		}
		requeue, err := r.reconcile(context.Background(), "cons", schema.GroupResource{Resource: "configmaps"})
		if (err != nil) != tc.wantErr || (requeue > time.Duration(0)) != tc.wantRequeue {
			t.Errorf("%s: requeue %v, err %v; want requeue %v, error %v", tc.name, requeue, err, tc.wantRequeue, tc.wantErr)
		}
		if len(written) != len(tc.want) {
			t.Errorf("%s: wrote %v, want %v", tc.name, written, tc.want)
			continue
		}
		for name, want := range tc.want {
			got := written[name]
			if len(got) != len(want) {
				t.Errorf("%s: %s labelled %v, want %v", tc.name, name, got, want)
				continue
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s: %s labelled %v, want %v", tc.name, name, got, want)
				}
			}
		}
	}
}
