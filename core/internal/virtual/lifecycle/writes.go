package lifecycle

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// writeNotSupported answers, as kcp's lifecycle virtual workspaces do,
// whether a request for a LogicalCluster through one is a method they do
// not serve: LogicalClusters are read there, only their status is written
// (by initializers and terminators releasing a workspace). path is the
// rewritten path (/clusters/<c>/...).
func writeNotSupported(method, path string) (string, bool) {
	_, rest, ok := strings.Cut(strings.TrimPrefix(path, "/clusters/"), "/apis/"+corev1alpha1.SchemeGroupVersion.String()+"/logicalclusters")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return "", false
	}
	read := method == http.MethodGet || method == http.MethodHead
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case rest == "" || rest == "/":
		return verb(method), !read
	case len(parts) == 1:
		return verb(method), !read
	case len(parts) == 2 && parts[1] == "status":
		return verb(method), !read && method != http.MethodPut && method != http.MethodPatch
	}
	return "", false
}

func verb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return strings.ToLower(method)
}

// ValidateRelease checks a status write of a LogicalCluster through a
// lifecycle virtual workspace, as kcp does: it leaves the initializers
// (terminators) as they were, or removes exactly the caller's own; any
// other change of them is Invalid. Writes not through such a virtual
// workspace are not its business (nil).
func ValidateRelease(ctx context.Context, old, updated *corev1alpha1.LogicalCluster) error {
	t, ok := From(ctx)
	if !ok {
		return nil
	}
	var previous, current []string
	what := "initializer"
	if t.Kind == Initializing {
		for _, i := range old.Status.Initializers {
			previous = append(previous, string(i))
		}
		for _, i := range updated.Status.Initializers {
			current = append(current, string(i))
		}
	} else {
		what = "terminator"
		for _, i := range old.Status.Terminators {
			previous = append(previous, string(i))
		}
		for _, i := range updated.Status.Terminators {
			current = append(current, string(i))
		}
	}
	if slices.Equal(previous, current) {
		return nil
	}
	valid := len(previous)-len(current) == 1 && slices.Contains(previous, t.ID) && !slices.Contains(current, t.ID)
	for _, c := range current {
		valid = valid && slices.Contains(previous, c)
	}
	if valid {
		return nil
	}
	return apierrors.NewInvalid(corev1alpha1.Kind("LogicalCluster"), updated.Name, field.ErrorList{
		field.Invalid(field.NewPath("status", what+"s"), current, fmt.Sprintf("only removing the %q %s is supported", t.ID, what))})
}

// methodNotSupported is kcp's answer to a write it does not serve.
func methodNotSupported(verb string) error {
	return apierrors.NewMethodNotSupported(schema.GroupResource{Group: corev1alpha1.SchemeGroupVersion.Group, Resource: "logicalclusters"}, verb)
}
