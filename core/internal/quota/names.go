package quota

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// standard are kube's standard quota resource names (those without a
// "/"); any other name without a "/" is refused, as kube-apiserver does.
var standard = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true, corev1.ResourceRequestsStorage: true,
	corev1.ResourceRequestsEphemeralStorage: true, corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
	corev1.ResourceLimitsEphemeralStorage: true, corev1.ResourcePods: true, corev1.ResourceQuotas: true,
	corev1.ResourceServices: true, corev1.ResourceReplicationControllers: true, corev1.ResourceSecrets: true,
	corev1.ResourcePersistentVolumeClaims: true, corev1.ResourceConfigMaps: true,
	corev1.ResourceServicesNodePorts: true, corev1.ResourceServicesLoadBalancers: true,
}

// hugePages reports kube's huge page quota names (hugepages-<size>,
// requests.hugepages-<size>).
func hugePages(name corev1.ResourceName) bool {
	s := string(name)
	return strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix)
}

// storageClassSuffixes end the per-StorageClass names of kube's
// PersistentVolumeClaim evaluator: <class>.storageclass.storage.k8s.io/...
var storageClassSuffixes = []string{
	".storageclass.storage.k8s.io/" + string(corev1.ResourceRequestsStorage),
	".storageclass.storage.k8s.io/" + string(corev1.ResourcePersistentVolumeClaims),
}

// Unserved reports whether name is counted on Kubernetes from Pods,
// PersistentVolumeClaims or Services only: compute (cpu, memory,
// ephemeral storage, huge pages and extended resources, requested or
// limited), storage requests and the Service types (services.nodeports,
// services.loadbalancers). The core serves none of those kinds, so their
// usage is always 0. The object counts of those kinds (pods, services,
// persistentvolumeclaims, count/pods, ...) are counted as any other.
func Unserved(name corev1.ResourceName) bool {
	if _, ok := ResourceOf(name); ok {
		return false
	}
	s := string(name)
	switch {
	case standard[name], hugePages(name):
		return true
	case strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix) && strings.Contains(s, "/"):
		return true // extended resources: requests.<domain>/<name>
	}
	for _, suffix := range storageClassSuffixes {
		if strings.HasSuffix(s, suffix) && len(s) > len(suffix) {
			return true
		}
	}
	return false
}

// Tracked reports whether Usage reports a usage for name: an object
// count or an Unserved name. Other names with a "/" (kube's are counted
// by evaluators of kinds the core does not serve) get none.
func Tracked(name corev1.ResourceName) bool {
	_, ok := ResourceOf(name)
	return ok || Unserved(name)
}

// integer reports names whose quantities must be whole numbers (kube's
// "integer resources": object counts, services.*).
func integer(name corev1.ResourceName) bool {
	if _, ok := ResourceOf(name); ok {
		return true
	}
	return name == corev1.ResourceServicesNodePorts || name == corev1.ResourceServicesLoadBalancers ||
		strings.HasSuffix(string(name), ".storageclass.storage.k8s.io/"+string(corev1.ResourcePersistentVolumeClaims))
}

// ValidateHard checks a quota's spec.hard (or status) as kube-apiserver
// does: each name a qualified name and, without a "/", one of kube's
// standard quota names; each quantity not negative, and whole for
// counts.
func ValidateHard(list corev1.ResourceList, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for name, q := range list {
		p := path.Key(string(name))
		for _, msg := range validation.IsQualifiedName(string(name)) {
			errs = append(errs, field.Invalid(p, name, msg))
		}
		if !strings.Contains(string(name), "/") && !standard[name] && !hugePages(name) {
			errs = append(errs, field.Invalid(p, name, "must be a standard resource for quota"))
		}
		if q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be greater than or equal to 0"))
		}
		if integer(name) && q.MilliValue()%1000 != 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must be an integer"))
		}
	}
	return errs
}

// zero is the usage of an unserved name.
var zero = *resource.NewQuantity(0, resource.DecimalSI)
