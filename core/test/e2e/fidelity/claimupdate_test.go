package fidelity

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	"github.com/kcp-dev/sdk/apis/apis/v1alpha2/permissionclaims"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestPermissionClaimSelectorUpdate checks that the consumer may change
// the selector of an accepted claim, as kcp's e2e does: the claim label
// and what the provider sees through the APIExport virtual workspace
// follow the new selector.
func TestPermissionClaimSelectorUpdate(t *testing.T) {
	t.Parallel()
	c := newClaimsSetup(t, "claimupdate")
	ck := c.s.KubectlFor(c.consumer.Path)
	ck.Run(t, "create", "configmap", "picked")
	ck.Run(t, "label", "configmap", "picked", "app=picked")
	ck.Run(t, "create", "configmap", "other")
	ck.Run(t, "label", "configmap", "other", "app=other")
	key, value, err := permissionclaims.ToLabelKeyAndValue(logicalcluster.Name(c.provider.Cluster), scopedExport,
		apisv1alpha2.PermissionClaim{GroupResource: apisv1alpha2.GroupResource{Resource: "configmaps"}})
	if err != nil {
		t.Fatal(err)
	}
	claimed := func(name string) bool {
		var cm metav1.PartialObjectMetadata
		if err := json.Unmarshal([]byte(ck.Run(t, "get", "configmap", name, "-o", "json")), &cm); err != nil {
			t.Fatal(err)
		}
		return cm.Labels[key] == value
	}
	base := "/clusters/" + c.consumer.Cluster + "/api/v1/namespaces/default/configmaps"
	expect := func(what, listed string, picked, other bool) {
		t.Helper()
		framework.Eventually(t, 30*time.Second, 250*time.Millisecond, what, func() (bool, string) {
			r := c.vw(t, "GET", base, nil)
			if r.Err != nil || r.Code != 200 {
				return false, r.String()
			}
			got := names(t, r)
			return got == listed && claimed("picked") == picked && claimed("other") == other, "listed " + got
		})
	}
	expect("the provider to see the picked configmap", "picked", true, false)

	ck.Run(t, "patch", "apibinding", "sprockets", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/permissionClaims/0/selector","value":{"matchLabels":{"app":"other"}}}]`)
	framework.RequireEqual(t, ck.Run(t, "get", "apibinding", "sprockets", "-o", "jsonpath={.spec.permissionClaims[0].selector.matchLabels.app}"),
		"other", "the claim's selector after the update")
	expect("the provider to see the other configmap once the selector picks app=other", "other", false, true)
	framework.RequireCode(t, c.vw(t, "GET", base+"/picked", nil), "get the configmap the selector no longer picks", 404)

	ck.Run(t, "patch", "apibinding", "sprockets", "--type=json", "-p",
		`[{"op":"replace","path":"/spec/permissionClaims/0/selector","value":{"matchAll":true}}]`)
	expect("the provider to see every configmap with matchAll", "kube-root-ca.crt,other,picked", true, true)
}
