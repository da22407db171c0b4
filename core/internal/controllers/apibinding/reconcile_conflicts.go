package apibinding

import (
	"fmt"

	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
)

// lock says who holds a resource of a consumer, as kcp's resource lock
// does (its fields and their order are kcp's: conditions print it).
type lock struct {
	Name string // the binding, or empty for a CRD
	CRD  bool
}

// conflictChecker finds what keeps a binding from serving its resources
// in a consumer, as kcp's APIBinding controller does: a resource another
// binding or a CRD of the consumer already holds, or names (singular,
// short names, kind, list kind) another served resource of the group
// already uses.
type conflictChecker struct {
	// own: the consumer's CRDs; bound: what each binding serves there;
	// bindings: the consumer's bindings.
	own      func(cluster string) []*apiextensionsv1.CustomResourceDefinition
	bound    func(cluster string) map[string][]*apiextensionsv1.CustomResourceDefinition
	bindings func(cluster string) []*apisv1alpha2.APIBinding
}

// holder returns who else holds gr in cluster: a CRD of the consumer,
// another binding serving it, or another binding that had it bound
// (status.boundResources) when b did not (so a restart, when nothing is
// served yet, keeps the resource with the binding that had it).
func (c *conflictChecker) holder(cluster string, b *apisv1alpha2.APIBinding, gr schema.GroupResource) (lock, bool) {
	for _, crd := range c.own(cluster) {
		if crd.Spec.Group == gr.Group && crd.Spec.Names.Plural == gr.Resource {
			return lock{CRD: true}, true
		}
	}
	for other, crds := range c.bound(cluster) {
		if other == b.Name {
			continue
		}
		for _, crd := range crds {
			if crd.Spec.Group == gr.Group && crd.Spec.Names.Plural == gr.Resource {
				return lock{Name: other}, true
			}
		}
	}
	if hasBound(b, gr) {
		return lock{}, false
	}
	for _, other := range c.bindings(cluster) {
		if other.Name != b.Name && hasBound(other, gr) {
			return lock{Name: other.Name}, true
		}
	}
	return lock{}, false
}

// namesConflict describes, with kcp's message, a clash of def's names with
// another resource of its group served in cluster, or returns "".
func (c *conflictChecker) namesConflict(cluster string, b *apisv1alpha2.APIBinding, def *apiextensionsv1.CustomResourceDefinition) string {
	for _, crd := range c.own(cluster) {
		if details := namesClash(crd, def); details != "" {
			return fmt.Sprintf("naming conflict with CustomResourceDefinition %q: %s", crd.Name, details)
		}
	}
	for other, crds := range c.bound(cluster) {
		if other == b.Name {
			continue
		}
		for _, crd := range crds {
			if details := namesClash(crd, def); details != "" {
				return fmt.Sprintf("naming conflict with APIBinding %q bound to %s: %s", other, c.boundTo(cluster, other), details)
			}
		}
	}
	return ""
}

// boundTo names the export of a consumer's binding as kcp does.
func (c *conflictChecker) boundTo(cluster, binding string) string {
	for _, b := range c.bindings(cluster) {
		if b.Name != binding || b.Spec.Reference.Export == nil {
			continue
		}
		if ref := b.Spec.Reference.Export; ref.Path != "" {
			return "APIExport " + ref.Path + ":" + ref.Name
		}
		return fmt.Sprintf("local APIExport %q", b.Spec.Reference.Export.Name)
	}
	return fmt.Sprintf("APIBinding %q", binding)
}

// namesClash compares the names of two resources of one group as kcp
// does (the existing one's accepted names against the incoming spec).
func namesClash(existing, incoming *apiextensionsv1.CustomResourceDefinition) string {
	if existing.Spec.Group != incoming.Spec.Group {
		return ""
	}
	have := existing.Status.AcceptedNames
	if have.Plural == "" {
		have = existing.Spec.Names
	}
	want := incoming.Spec.Names
	names := sets.New(have.Plural, have.Singular)
	names.Insert(have.ShortNames...)
	switch {
	case names.Has(want.Plural):
		return fmt.Sprintf("spec.names.plural=%v is forbidden", want.Plural)
	case want.Singular != "" && names.Has(want.Singular):
		return fmt.Sprintf("spec.names.singular=%v is forbidden", want.Singular)
	}
	for _, s := range want.ShortNames {
		if names.Has(s) {
			return fmt.Sprintf("spec.names.shortNames=%v is forbidden", want.ShortNames)
		}
	}
	kinds := sets.New(have.Kind, have.ListKind)
	switch {
	case kinds.Has(want.Kind):
		return fmt.Sprintf("spec.names.kind=%v is forbidden", want.Kind)
	case want.ListKind != "" && kinds.Has(want.ListKind):
		return fmt.Sprintf("spec.names.listKind=%v is forbidden", want.ListKind)
	}
	return ""
}

func hasBound(b *apisv1alpha2.APIBinding, gr schema.GroupResource) bool {
	for _, r := range b.Status.BoundResources {
		if r.Group == gr.Group && r.Resource == gr.Resource {
			return true
		}
	}
	return false
}
