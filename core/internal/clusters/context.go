// Package clusters carries the logical cluster of a request: its name, how it
// is parsed from a /clusters/<name>/ path, and how it travels in a context.
package clusters

import (
	"context"
	"regexp"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Wildcard is the cluster name that selects every logical cluster.
const Wildcard = "*"

// Annotation is stamped on every stored object with the name of its cluster.
const Annotation = "kcp.io/cluster"

// Root is the logical cluster that exists from the start.
const Root = "root"

type contextKey struct{}

// WithCluster returns a context that carries the logical cluster name.
func WithCluster(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, contextKey{}, name)
}

// From returns the logical cluster name carried by ctx.
func From(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(contextKey{}).(string)
	return name, ok && name != ""
}

// IsWildcard reports whether ctx selects every cluster.
func IsWildcard(ctx context.Context) bool {
	name, _ := From(ctx)
	return name == Wildcard
}

var (
	segment = `[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?`
	// nameRE matches a logical cluster name: one path segment, or a
	// system: name such as system:admin.
	nameRE = regexp.MustCompile(`^(system:)?` + segment + `$`)
	// pathRE matches a workspace path such as root:org:team.
	pathRE = regexp.MustCompile(`^` + segment + `(:` + segment + `)*$`)
)

// IsValidName reports whether s is a well-formed logical cluster name.
func IsValidName(s string) bool { return nameRE.MatchString(s) }

// IsValidPath reports whether s is a well-formed workspace path or cluster name.
func IsValidPath(s string) bool { return pathRE.MatchString(s) || nameRE.MatchString(s) }

type filterKey struct{}

// Filter decides whether a wildcard list or watch shows an object of a
// cluster.
type Filter func(cluster string, obj runtime.Object) bool

// WithFilter narrows a wildcard list or watch to the objects keep accepts
// (the APIExport virtual workspace shows only consumers of the export).
func WithFilter(ctx context.Context, keep Filter) context.Context {
	return context.WithValue(ctx, filterKey{}, keep)
}

// FilterFrom returns the filter of ctx, if any.
func FilterFrom(ctx context.Context) (Filter, bool) {
	f, ok := ctx.Value(filterKey{}).(Filter)
	return f, ok && f != nil
}

type resourceFilterKey struct{}

// resourceFilter is a Filter for the objects of one resource.
type resourceFilter struct {
	resource schema.GroupResource
	keep     Filter
	selector func(cluster string) labels.Selector
}

// WithResourceFilter narrows what a request sees and touches of one
// resource, in one cluster or across all: an object keep refuses is not
// found when read, updated or deleted, and left out of lists and watches.
// Objects of other resources the request reads (such as the namespace an
// admission plugin looks up) are not filtered.
func WithResourceFilter(ctx context.Context, resource schema.GroupResource, keep Filter) context.Context {
	return context.WithValue(ctx, resourceFilterKey{}, resourceFilter{resource: resource, keep: keep})
}

// WithResourceSelector is WithResourceFilter that also gives, for lists
// and watches in one cluster, a label selector keep agrees with (nil: none
// for that cluster). The storage applies it as a label selector of the
// request, so a watched object that stops matching ends with a DELETED
// event, as with any label selector.
func WithResourceSelector(ctx context.Context, resource schema.GroupResource, keep Filter, selector func(cluster string) labels.Selector) context.Context {
	return context.WithValue(ctx, resourceFilterKey{}, resourceFilter{resource: resource, keep: keep, selector: selector})
}

// ResourceSelectorFrom returns the label selector of ctx for resource in
// cluster, if any.
func ResourceSelectorFrom(ctx context.Context, resource schema.GroupResource, cluster string) (labels.Selector, bool) {
	f, ok := ctx.Value(resourceFilterKey{}).(resourceFilter)
	if !ok || f.selector == nil || f.resource != resource {
		return nil, false
	}
	sel := f.selector(cluster)
	return sel, sel != nil
}

// ResourceFilterFrom returns the filter of ctx for resource, if any.
func ResourceFilterFrom(ctx context.Context, resource schema.GroupResource) (Filter, bool) {
	f, ok := ctx.Value(resourceFilterKey{}).(resourceFilter)
	if !ok || f.keep == nil || f.resource != resource {
		return nil, false
	}
	return f.keep, true
}
