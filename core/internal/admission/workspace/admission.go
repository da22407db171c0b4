// Package workspace admits new Workspaces as kcp does: it fills in the
// type (the parent type's default child type, with its path), refuses
// types the parent or child type rules out, and requires verb "use" on
// every type of the child's alias set. The fields the system writes
// (spec.cluster, spec.URL, the status and the owner annotation) are
// written only by system identities (authorization/privileged), and a
// Workspace never adopts a logical cluster another Workspace owns: the
// workspace controller deletes a Workspace's logical cluster with it.
package workspace

import (
	"context"
	"fmt"
	"strings"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/meshplane/meshplane/core/internal/authorization/privileged"
	"github.com/meshplane/meshplane/core/internal/clusters"
	"github.com/meshplane/meshplane/core/internal/tenancy"
	"github.com/meshplane/meshplane/core/internal/virtual/apiexportvw"
)

// Plugin is the admission plugin.
type Plugin struct {
	*admission.Handler
	Types      *tenancy.Types
	Index      *tenancy.Index
	Authorizer authorizer.Authorizer
}

var (
	_ admission.MutationInterface   = &Plugin{}
	_ admission.ValidationInterface = &Plugin{}
)

// New returns the plugin.
func New(types *tenancy.Types, index *tenancy.Index, authz authorizer.Authorizer) *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update), Types: types, Index: index, Authorizer: authz}
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	if a.GetOperation() != admission.Create || a.GetResource().GroupResource() != tenancyv1alpha1.Resource("workspaces") || a.GetSubresource() != "" {
		return nil
	}
	ws, ok := a.GetObject().(*tenancyv1alpha1.Workspace)
	if !ok {
		return nil
	}
	parent, _ := clusters.From(ctx)
	lc, ok := p.Index.Get(parent)
	if !ok {
		return apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), ws.Name,
			fmt.Errorf("logical cluster %q is not a workspace: workspaces can only be created inside workspaces", parent))
	}
	if !privileged.System(ctx, a.GetUserInfo()) {
		// As kcp: a child requires the groups its parent requires; only
		// the system sets other ones.
		if groups := lc.Annotations[tenancy.RequiredGroupsAnnotation]; groups != "" {
			if ws.Annotations == nil {
				ws.Annotations = map[string]string{}
			}
			ws.Annotations[tenancy.RequiredGroupsAnnotation] = groups
		} else {
			delete(ws.Annotations, tenancy.RequiredGroupsAnnotation)
		}
	}
	parentPath := p.Index.Path(parent)
	parentType, err := p.typeOf(ctx, lc.Annotations[tenancy.TypeAnnotation])
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("type of parent workspace %s: %w", parentPath, err))
	}
	fld := field.NewPath("spec", "type")
	if ws.Spec.Type == nil || ws.Spec.Type.Name == "" {
		def := parentType.Spec.DefaultChildWorkspaceType
		if def == nil {
			return apierrors.NewInvalid(tenancyv1alpha1.Kind("Workspace"), ws.Name, field.ErrorList{
				field.Required(fld, fmt.Sprintf("workspace type %s has no default child type", parentType.ID()))})
		}
		ws.Spec.Type = def.DeepCopy()
	}
	child, err := p.Types.Resolve(ctx, *ws.Spec.Type, parentPath)
	if err != nil {
		return apierrors.NewInvalid(tenancyv1alpha1.Kind("Workspace"), ws.Name, field.ErrorList{field.Invalid(fld, ws.Spec.Type, err.Error())})
	}
	ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: tenancyv1alpha1.WorkspaceTypeName(child.Name), Path: child.Path}
	childAliases, err := p.Types.Aliases(ctx, child)
	if err != nil {
		return apierrors.NewInvalid(tenancyv1alpha1.Kind("Workspace"), ws.Name, field.ErrorList{field.Invalid(fld, ws.Spec.Type, err.Error())})
	}
	parentAliases, err := p.Types.Aliases(ctx, parentType)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if err := tenancy.CheckCompatible(parentAliases, childAliases); err != nil {
		return apierrors.NewInvalid(tenancyv1alpha1.Kind("Workspace"), ws.Name, field.ErrorList{field.Invalid(fld, ws.Spec.Type, err.Error())})
	}
	for _, t := range childAliases {
		typeCluster := t.Annotations[clusters.Annotation]
		attrs := authorizer.AttributesRecord{User: a.GetUserInfo(), Verb: "use", APIGroup: tenancyv1alpha1.SchemeGroupVersion.Group,
			APIVersion: tenancyv1alpha1.SchemeGroupVersion.Version, Resource: "workspacetypes", Name: t.Name, ResourceRequest: true}
		// Asked as a plain request in the type's cluster, also when the
		// Workspace is created through an APIExport virtual workspace.
		d, _, _ := p.Authorizer.Authorize(clusters.WithCluster(apiexportvw.Plain(ctx), typeCluster), attrs)
		if d != authorizer.DecisionAllow {
			return apierrors.NewForbidden(tenancyv1alpha1.Resource("workspaces"), ws.Name,
				fmt.Errorf("user %q is not allowed to use workspace type %s", a.GetUserInfo().GetName(), t.ID()))
		}
	}
	return nil
}

// typeOf resolves a <path>:<name> type id.
func (p *Plugin) typeOf(ctx context.Context, id string) (tenancy.Type, error) {
	i := strings.LastIndex(id, ":")
	if i < 0 {
		return tenancy.Type{}, fmt.Errorf("malformed type %q", id)
	}
	return p.Types.Resolve(ctx, tenancyv1alpha1.WorkspaceTypeReference{Path: id[:i], Name: tenancyv1alpha1.WorkspaceTypeName(id[i+1:])}, "")
}
