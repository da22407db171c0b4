package fga

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// Resource is a Kubernetes resource as the model sees it.
type Resource struct {
	// Group is the API group, "" for the core group.
	Group string
	// Plural is the resource name, e.g. "configmaps".
	Plural string
	// Singular is the singular name, e.g. "configmap".
	Singular string
	// Namespaced resources have a namespace as parent, others the account.
	Namespaced bool
}

// Type is the OpenFGA type of the resource's objects.
func (r Resource) Type() string { return TypeName(r.Group, r.Singular) }

// Relation is the relation checked on the parent for verb (create, list,
// watch).
func (r Resource) Relation(verb string) string { return RelationName(verb, r.Group, r.Plural) }

// ParentType is the type of the resource's parent: the namespace or the
// account.
func (r Resource) ParentType() string {
	if r.Namespaced {
		return NamespaceType
	}
	return AccountType
}

// ModuleName names the module generated for the resource:
// "<group>_<plural>", shortened like a type name.
func (r Resource) ModuleName() string {
	return Shorten(GroupName(r.Group) + "_" + strings.ToLower(r.Plural))
}

// Validate reports a resource the model cannot name.
func (r Resource) Validate() error {
	if r.Plural == "" || r.Singular == "" {
		return fmt.Errorf("resource %q of group %q: plural and singular names are required", r.Plural, r.Group)
	}
	for _, s := range []string{r.Group, r.Plural, r.Singular} {
		if strings.ContainsAny(s, " \t\n:#@/*") {
			return fmt.Errorf("resource %q of group %q: %q has a character OpenFGA names cannot hold", r.Plural, r.Group, s)
		}
	}
	return nil
}

// The IAM relations every account and resource type has, for the grant
// API: who may assign and remove roles on an object, and who may see its
// role assignments and users (Platform Mesh's names).
const (
	RelationManageIAMRoles = "manage_iam_roles"
	RelationGetIAMRoles    = "get_iam_roles"
	RelationGetIAMUsers    = "get_iam_users"
)

// IAMRelations are the IAM relations in the order the model writes them.
var IAMRelations = []string{RelationManageIAMRoles, RelationGetIAMRoles, RelationGetIAMUsers}

// Permissions of the contract: members may read, owners may also write
// and delete. Both are inherited down the account tree through parent.
var (
	// parentRelationOf gives who may use a verb on the parent.
	parentRelationOf = map[string]string{"create": RelationOwner, "list": RelationMember, "watch": RelationMember}
	// objectRelationOf gives who may use a verb on an object.
	objectRelationOf = map[string]string{"get": RelationMember, "watch": RelationMember,
		"update": RelationOwner, "patch": RelationOwner, "delete": RelationOwner}
	// iamRelationOf gives who may use an IAM relation of an object.
	iamRelationOf = map[string]string{RelationManageIAMRoles: RelationOwner,
		RelationGetIAMRoles: RelationMember, RelationGetIAMUsers: RelationMember}
)

// ResourceModule is the module generated for a bound resource: the
// create_/list_/watch_ relations on its parent type and its own type with
// parent, member, owner, the verbs and the IAM relations.
func ResourceModule(r Resource) string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\n", r.ModuleName())
	fmt.Fprintf(&b, "extend type %s\n  relations\n", r.ParentType())
	writeParentRelations(&b, r)
	b.WriteString("\n")
	writeResourceType(&b, r)
	return b.String()
}

func writeParentRelations(b *strings.Builder, r Resource) {
	for _, verb := range ParentVerbs {
		fmt.Fprintf(b, "    define %s: %s\n", r.Relation(verb), parentRelationOf[verb])
	}
}

// writeObjectRelations writes owner, member, the verbs on one object and
// the IAM relations of a type whose parent is of type parent; with groups,
// a group's members may hold owner and member too (the account type: the
// grant API's group subjects).
func writeObjectRelations(b *strings.Builder, parent string, groups bool) {
	subjects := fmt.Sprintf("%s, %s#%s", UserType, RoleType, RelationAssignee)
	if groups {
		subjects += fmt.Sprintf(", %s#%s", GroupType, RelationMember)
	}
	fmt.Fprintf(b, "    define %s: [%s]\n", RelationParent, parent)
	fmt.Fprintf(b, "    define %s: [%s] or %s from %s\n", RelationOwner, subjects, RelationOwner, RelationParent)
	fmt.Fprintf(b, "    define %s: [%s] or %s or %s from %s\n", RelationMember, subjects, RelationOwner, RelationMember, RelationParent)
	for _, verb := range ObjectVerbs {
		fmt.Fprintf(b, "    define %s: %s\n", verb, objectRelationOf[verb])
	}
	for _, rel := range IAMRelations {
		fmt.Fprintf(b, "    define %s: %s\n", rel, iamRelationOf[rel])
	}
}

func writeResourceType(b *strings.Builder, r Resource) {
	fmt.Fprintf(b, "type %s\n  relations\n", r.Type())
	writeObjectRelations(b, r.ParentType(), false)
}

// BuiltinResources are the kinds every workspace serves; the core module
// gives them the same relations a bound resource gets.
var BuiltinResources = []Resource{
	{Group: "", Plural: "namespaces", Singular: "namespace"},
	{Group: "", Plural: "configmaps", Singular: "configmap", Namespaced: true},
	{Group: "", Plural: "secrets", Singular: "secret", Namespaced: true},
	{Group: "", Plural: "serviceaccounts", Singular: "serviceaccount", Namespaced: true},
	{Group: "", Plural: "events", Singular: "event", Namespaced: true},
	{Group: "", Plural: "limitranges", Singular: "limitrange", Namespaced: true},
	{Group: "", Plural: "resourcequotas", Singular: "resourcequota", Namespaced: true},
	{Group: "events.k8s.io", Plural: "events", Singular: "event", Namespaced: true},
	{Group: "coordination.k8s.io", Plural: "leases", Singular: "lease", Namespaced: true},
	{Group: "rbac.authorization.k8s.io", Plural: "roles", Singular: "role", Namespaced: true},
	{Group: "rbac.authorization.k8s.io", Plural: "rolebindings", Singular: "rolebinding", Namespaced: true},
	{Group: "rbac.authorization.k8s.io", Plural: "clusterroles", Singular: "clusterrole"},
	{Group: "rbac.authorization.k8s.io", Plural: "clusterrolebindings", Singular: "clusterrolebinding"},
	{Group: "apiextensions.k8s.io", Plural: "customresourcedefinitions", Singular: "customresourcedefinition"},
	{Group: "admissionregistration.k8s.io", Plural: "validatingwebhookconfigurations", Singular: "validatingwebhookconfiguration"},
	{Group: "admissionregistration.k8s.io", Plural: "mutatingwebhookconfigurations", Singular: "mutatingwebhookconfiguration"},
	{Group: "admissionregistration.k8s.io", Plural: "validatingadmissionpolicies", Singular: "validatingadmissionpolicy"},
	{Group: "admissionregistration.k8s.io", Plural: "validatingadmissionpolicybindings", Singular: "validatingadmissionpolicybinding"},
	{Group: "admissionregistration.k8s.io", Plural: "mutatingadmissionpolicies", Singular: "mutatingadmissionpolicy"},
	{Group: "admissionregistration.k8s.io", Plural: "mutatingadmissionpolicybindings", Singular: "mutatingadmissionpolicybinding"},
	{Group: "apis.kcp.io", Plural: "apibindings", Singular: "apibinding"},
	{Group: "apis.kcp.io", Plural: "apiexports", Singular: "apiexport"},
	{Group: "apis.kcp.io", Plural: "apiresourceschemas", Singular: "apiresourceschema"},
	{Group: "apis.kcp.io", Plural: "apiexportendpointslices", Singular: "apiexportendpointslice"},
	{Group: "tenancy.kcp.io", Plural: "workspaces", Singular: "workspace"},
	{Group: "core.platform-mesh.io", Plural: "accountinfos", Singular: "accountinfo"},
}

// AccountResource is the Account kind. Its type is spelled out in the core
// module (it is the root of the tree); its create_/list_/watch_ relations
// sit on the parent account like those of any cluster-scoped kind.
var AccountResource = Resource{Group: "core.platform-mesh.io", Plural: "accounts", Singular: "account"}

// CoreModuleName is the name of the core module.
const CoreModuleName = "core"

// CoreModule is the core module of every organization's model (the
// Store's spec.coreModule): users, roles, accounts, namespaces and the
// built-in kinds of a workspace.
var CoreModule = buildCoreModule()

func buildCoreModule() string {
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\n", CoreModuleName)
	fmt.Fprintf(&b, "type %s\n\n", UserType)
	fmt.Fprintf(&b, "type %s\n  relations\n    define %s: [%s, %s:*]\n\n", RoleType, RelationAssignee, UserType, UserType)
	// A group's members are not stored: the webhook sends them with each
	// Check as contextual tuples, from the groups the core authenticated.
	fmt.Fprintf(&b, "type %s\n  relations\n    define %s: [%s]\n\n", GroupType, RelationMember, UserType)

	// The account: owners and members are inherited from the parent
	// account. Its members may read it; only its owners (and so the
	// parent's) may change or delete it or manage its roles.
	fmt.Fprintf(&b, "type %s\n  relations\n", AccountType)
	writeObjectRelations(&b, AccountType, true)
	var clusterScoped, namespaced []Resource
	for _, r := range BuiltinResources {
		if r.Namespaced {
			namespaced = append(namespaced, r)
		} else {
			clusterScoped = append(clusterScoped, r)
		}
	}
	sortResources(clusterScoped)
	sortResources(namespaced)
	writeParentRelations(&b, AccountResource)
	for _, r := range clusterScoped {
		writeParentRelations(&b, r)
	}
	b.WriteString("\n")

	// The namespace: a resource type of its own whose relations also hold
	// those of the namespaced kinds.
	ns := BuiltinResources[0]
	writeResourceType(&b, ns)
	for _, r := range namespaced {
		writeParentRelations(&b, r)
	}
	for _, r := range append(clusterScoped, namespaced...) {
		if r == ns {
			continue
		}
		b.WriteString("\n")
		writeResourceType(&b, r)
	}
	return b.String()
}

func sortResources(rs []Resource) {
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Group != rs[j].Group {
			return rs[i].Group < rs[j].Group
		}
		return rs[i].Plural < rs[j].Plural
	})
}

// previousCoreModules are the SHA-256 sums of the core modules earlier
// versions of the platform wrote into Stores' spec.coreModule
// (testdata/core-module-<n>.fga holds their text).
var previousCoreModules = map[string]bool{
	// 1: members could update, patch and delete Accounts.
	"d6804d49a40a5ccfb841bbe0a3e3fa53382f6bca0422c069602dd057b6b1c1cd": true,
	// 2: no group subjects.
	"907a3fab0428e8fbbda3ad0159be14943da491cc6821bb3d92bbe3cf4a22dd8b": true,
}

// CurrentCoreModule returns the core module a Store's model is composed
// from: CoreModule when spec is a core module an earlier platform wrote
// (so organizations created before a model change get the new one), and
// spec unchanged otherwise (a core module someone wrote by hand is kept).
func CurrentCoreModule(spec string) (string, bool) {
	sum := sha256.Sum256([]byte(spec))
	if spec != CoreModule && previousCoreModules[hex.EncodeToString(sum[:])] {
		return CoreModule, true
	}
	return spec, false
}
