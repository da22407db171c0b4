package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestUnserved(t *testing.T) {
	for _, name := range []corev1.ResourceName{"cpu", "memory", "requests.cpu", "limits.memory", "requests.ephemeral-storage",
		"requests.storage", "services.loadbalancers", "services.nodeports", "hugepages-2Mi", "requests.hugepages-1Gi",
		"requests.nvidia.com/gpu", "gold.storageclass.storage.k8s.io/requests.storage", "gold.storageclass.storage.k8s.io/persistentvolumeclaims"} {
		if !Unserved(name) {
			t.Errorf("Unserved(%s) = false: kube counts it from pods, claims or services only", name)
		}
	}
	for _, name := range []corev1.ResourceName{"pods", "services", "persistentvolumeclaims", "configmaps", "count/pods",
		"count/widgets.example.com", "example.com/foo", ".storageclass.storage.k8s.io/requests.storage"} {
		if Unserved(name) {
			t.Errorf("Unserved(%s) = true", name)
		}
	}
}

func TestValidateHard(t *testing.T) {
	ok := corev1.ResourceList{
		"configmaps": resource.MustParse("2"), "count/widgets.example.com": resource.MustParse("3"),
		"requests.cpu": resource.MustParse("500m"), "requests.storage": resource.MustParse("1Gi"),
		"gold.storageclass.storage.k8s.io/requests.storage": resource.MustParse("1Gi"), "hugepages-2Mi": resource.MustParse("0"),
	}
	if errs := ValidateHard(ok, field.NewPath("spec", "hard")); len(errs) > 0 {
		t.Fatalf("valid names refused: %v", errs)
	}
	for name, q := range map[corev1.ResourceName]string{
		"foo":              "must be a standard resource for quota",
		"configmaps":       "must be greater than or equal to 0",
		"count/configmaps": "must be an integer",
		"count/Bad Name!":  "spec.hard[count/Bad Name!]",
	} {
		qty := resource.MustParse("1")
		switch name {
		case "configmaps":
			qty = resource.MustParse("-1")
		case "count/configmaps":
			qty = resource.MustParse("1500m")
		}
		errs := ValidateHard(corev1.ResourceList{name: qty}, field.NewPath("spec", "hard"))
		if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), q) {
			t.Errorf("ValidateHard(%s=%s) = %v, want an error containing %q", name, qty.String(), errs, q)
		}
	}
}
