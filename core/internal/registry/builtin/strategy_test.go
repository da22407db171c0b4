package builtin

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
)

// fakeStorage stands in for etcd: the tests only use strategies and
// table convertors.
type fakeStorage struct{ storage.Interface }

type fakeOptions struct{}

func (fakeOptions) GetRESTOptions(gr schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{GroupResource: gr},
		Decorator: func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object,
			func() runtime.Object, storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
			return fakeStorage{}, func() {}, nil
		},
		ResourcePrefix: gr.Group + "/" + gr.Resource,
	}, nil
}

func newTestStorage(t *testing.T) Storage {
	t.Helper()
	s, err := NewStorage(fakeOptions{})
	if err != nil {
		t.Fatalf("NewStorage: %v", err)
	}
	return s
}

// store returns the generic store behind gv/path.
func store(t *testing.T, s Storage, gv schema.GroupVersion, path string) *genericregistry.Store {
	t.Helper()
	switch st := s[gv][path].(type) {
	case *named:
		return st.Store
	case *statusREST:
		return st.store
	case *namespaceREST:
		return st.Store
	default:
		t.Fatalf("no registry for %s %s (got %T)", gv, path, s[gv][path])
		return nil
	}
}

// requestContext is a request in namespace ns by user alice.
func requestContext(ns string) context.Context {
	ctx := genericapirequest.WithNamespace(context.Background(), ns)
	return genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "alice", UID: "u-1", Groups: []string{"team"}})
}

// beforeCreate runs what a registry runs before storing a new object:
// the system fields the store fills, then the strategy.
func beforeCreate(st *genericregistry.Store, ctx context.Context, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(m)
	return rest.BeforeCreate(st.CreateStrategy, ctx, obj)
}

// invalidFields returns the fields an Invalid Status error names (each
// once: like kube-apiserver's own strategies, ours validate metadata again
// after the generic checks, which repeats metadata causes), or fails when
// err is not one.
func invalidFields(t *testing.T, what string, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("%s: error %v (%T), want an Invalid (422) Status", what, err, err)
	}
	var out []string
	for _, c := range err.(apierrors.APIStatus).Status().Details.Causes {
		out = append(out, c.Field)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	core   = corev1.SchemeGroupVersion
	rbacGV = rbacv1.SchemeGroupVersion
	tenant = tenancyv1alpha1.SchemeGroupVersion
	apis   = apisv1alpha2.SchemeGroupVersion
)

func om(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

func nsom(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: "default"} }

func TestCreateValidation(t *testing.T) {
	s := newTestStorage(t)
	bigValue := strings.Repeat("x", maxDataSize)
	for _, tc := range []struct {
		name       string
		gv         schema.GroupVersion
		resource   string
		namespace  string
		obj        runtime.Object
		wantFields []string // fields of the Invalid error; none: accepted
	}{
		{"valid configmap", core, "configmaps", "default", &corev1.ConfigMap{ObjectMeta: nsom("cm"), Data: map[string]string{"a.b": "1"}}, nil},
		{"configmap key with a space", core, "configmaps", "default", &corev1.ConfigMap{ObjectMeta: nsom("cm"), Data: map[string]string{"a b": "1"}},
			[]string{"data[a b]"}},
		{"configmap key in data and binaryData", core, "configmaps", "default",
			&corev1.ConfigMap{ObjectMeta: nsom("cm"), Data: map[string]string{"k": "1"}, BinaryData: map[string][]byte{"k": {1}}},
			[]string{"binaryData[k]"}},
		{"configmap over 1MiB", core, "configmaps", "default", &corev1.ConfigMap{ObjectMeta: nsom("cm"), Data: map[string]string{"k": bigValue}},
			[]string{"data"}},
		{"configmap with an invalid name", core, "configmaps", "default", &corev1.ConfigMap{ObjectMeta: nsom("Not_A_Name")},
			[]string{"metadata.name"}},
		{"role rule without verbs", rbacGV, "roles", "default",
			&rbacv1.Role{ObjectMeta: nsom("r"), Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}},
			[]string{"rules[0].verbs"}},
		{"role with a non-resource URL", rbacGV, "roles", "default",
			&rbacv1.Role{ObjectMeta: nsom("r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}},
			[]string{"rules[0].nonResourceURLs"}},
		{"clusterrole with a non-resource URL", rbacGV, "clusterroles", "",
			&rbacv1.ClusterRole{ObjectMeta: om("r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}}}, nil},
		{"clusterrole rule without groups and resources", rbacGV, "clusterroles", "",
			&rbacv1.ClusterRole{ObjectMeta: om("r"), Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}},
			[]string{"rules[0].apiGroups", "rules[0].resources"}},
		{"rolebinding to a clusterrole", rbacGV, "rolebindings", "default",
			&rbacv1.RoleBinding{ObjectMeta: nsom("b"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, Name: "alice"}}}, nil},
		{"rolebinding with a foreign roleRef group", rbacGV, "rolebindings", "default",
			&rbacv1.RoleBinding{ObjectMeta: nsom("b"), RoleRef: rbacv1.RoleRef{APIGroup: "example.com", Kind: "Role", Name: "r"}},
			[]string{"roleRef.apiGroup"}},
		{"clusterrolebinding to a role", rbacGV, "clusterrolebindings", "",
			&rbacv1.ClusterRoleBinding{ObjectMeta: om("b"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "r"}},
			[]string{"roleRef.kind"}},
		{"clusterrolebinding of a service account without namespace", rbacGV, "clusterrolebindings", "",
			&rbacv1.ClusterRoleBinding{ObjectMeta: om("b"), RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "sa"}, {Kind: "Robot", Name: "r2"}}},
			[]string{"subjects[0].namespace", "subjects[1].kind"}},
		{"csr without request and signer", certificatesv1.SchemeGroupVersion, "certificatesigningrequests", "",
			&certificatesv1.CertificateSigningRequest{ObjectMeta: om("csr")}, []string{"spec.request", "spec.signerName"}},
		{"resourcequota of counts and compute", core, "resourcequotas", "default", &corev1.ResourceQuota{ObjectMeta: nsom("q"),
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/widgets.example.com": apiresource.MustParse("2"), "requests.cpu": apiresource.MustParse("500m")}}}, nil},
		{"resourcequota of an unknown name", core, "resourcequotas", "default", &corev1.ResourceQuota{ObjectMeta: nsom("q"),
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"foo": apiresource.MustParse("1")}}}, []string{"spec.hard[foo]"}},
		{"valid workspace", tenant, "workspaces", "", &tenancyv1alpha1.Workspace{ObjectMeta: om("team-a")}, nil},
		{"workspace name with a dot", tenant, "workspaces", "", &tenancyv1alpha1.Workspace{ObjectMeta: om("team.a")}, []string{"metadata.name"}},
		{"workspace name over 63 characters", tenant, "workspaces", "", &tenancyv1alpha1.Workspace{ObjectMeta: om(strings.Repeat("a", 64))},
			[]string{"metadata.name"}},
		{"workspacetype with upper case", tenant, "workspacetypes", "", &tenancyv1alpha1.WorkspaceType{ObjectMeta: om("Team")},
			[]string{"metadata.name"}},
		{"apibinding without export", apis, "apibindings", "", &apisv1alpha2.APIBinding{ObjectMeta: om("b")},
			[]string{"spec.reference.export.name"}},
		{"valid apibinding", apis, "apibindings", "", &apisv1alpha2.APIBinding{ObjectMeta: om("b"),
			Spec: apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root:p", Name: "e"}}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store(t, s, tc.gv, tc.resource)
			err := beforeCreate(st, requestContext(tc.namespace), tc.obj)
			got := invalidFields(t, "create "+tc.name, err)
			if !slices.Equal(got, tc.wantFields) {
				t.Errorf("create %s %s: refused fields %v (err %v), want %v", tc.gv.WithResource(tc.resource), tc.name, got, err, tc.wantFields)
			}
		})
	}
}

func TestCreateNamespaceMismatch(t *testing.T) {
	st := store(t, newTestStorage(t), core, "configmaps")
	err := beforeCreate(st, requestContext("other"), &corev1.ConfigMap{ObjectMeta: nsom("cm")})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("create of a ConfigMap of namespace default in namespace other: err %v, want a BadRequest (400)", err)
	}
}

// TestPrepareForCreate checks what the server fills in on create.
func TestPrepareForCreate(t *testing.T) {
	s := newTestStorage(t)

	secret := &corev1.Secret{ObjectMeta: nsom("s"), StringData: map[string]string{"k": "v"}}
	if err := beforeCreate(store(t, s, core, "secrets"), requestContext("default"), secret); err != nil {
		t.Fatalf("create secret: %v", err)
	}
	if secret.Type != corev1.SecretTypeOpaque || string(secret.Data["k"]) != "v" || secret.StringData != nil {
		t.Errorf("created secret: type %q data %v stringData %v; want Opaque, data k=v, no stringData", secret.Type, secret.Data, secret.StringData)
	}

	ws := &tenancyv1alpha1.Workspace{ObjectMeta: om("team"), Status: tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseReady}}
	if err := beforeCreate(store(t, s, tenant, "workspaces"), requestContext(""), ws); err != nil {
		t.Fatalf("create workspace: %v", err)
	}
	if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseScheduling || ws.Generation != 1 ||
		!slices.Contains(ws.Finalizers, corev1alpha1.LogicalClusterFinalizerName) {
		t.Errorf("created workspace: phase %q, generation %d, finalizers %v; want Scheduling (given status dropped), 1, the logical cluster finalizer",
			ws.Status.Phase, ws.Generation, ws.Finalizers)
	}
	var owner authenticationv1.UserInfo
	if err := json.Unmarshal([]byte(ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey]), &owner); err != nil ||
		owner.Username != "alice" || owner.UID != "u-1" || !slices.Equal(owner.Groups, []string{"team"}) {
		t.Errorf("created workspace: owner annotation %q (%v), want alice/u-1/[team]", ws.Annotations[tenancyv1alpha1.ExperimentalWorkspaceOwnerAnnotationKey], err)
	}

	lc := &corev1alpha1.LogicalCluster{ObjectMeta: om("cluster"), Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseInitializing}}
	if err := beforeCreate(store(t, s, corev1alpha1.SchemeGroupVersion, "logicalclusters"), requestContext(""), lc); err != nil {
		t.Fatalf("create logicalcluster: %v", err)
	}
	if lc.Status.Phase != corev1alpha1.LogicalClusterPhaseInitializing {
		t.Errorf("created logicalcluster: phase %q, want the given Initializing (status kept on create)", lc.Status.Phase)
	}

	b := &apisv1alpha2.APIBinding{ObjectMeta: om("b"),
		Spec: apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Name: "e"}}}}
	if err := beforeCreate(store(t, s, apis, "apibindings"), requestContext(""), b); err != nil {
		t.Fatalf("create apibinding: %v", err)
	}
	if !slices.Equal(b.Finalizers, []string{BindingFinalizer}) {
		t.Errorf("created apibinding: finalizers %v, want [%s]", b.Finalizers, BindingFinalizer)
	}
}

func TestUpdateValidation(t *testing.T) {
	s := newTestStorage(t)
	stored := func(m metav1.ObjectMeta) metav1.ObjectMeta {
		m.UID, m.ResourceVersion, m.Generation = "uid-1", "5", 1
		return m
	}
	typ := func(name string) *tenancyv1alpha1.WorkspaceTypeReference {
		return &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: tenancyv1alpha1.WorkspaceTypeName(name)}
	}
	ref := func(name string) apisv1alpha2.BindingReference {
		return apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root:p", Name: name}}
	}
	roleRef := func(name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}
	}
	for _, tc := range []struct {
		name           string
		gv             schema.GroupVersion
		resource       string
		namespace      string
		old, obj       runtime.Object
		wantFields     []string
		wantGeneration int64 // 0: not checked
	}{
		{"workspace type changed", tenant, "workspaces", "",
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w")), Spec: tenancyv1alpha1.WorkspaceSpec{Type: typ("universal")}},
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w")), Spec: tenancyv1alpha1.WorkspaceSpec{Type: typ("organization")}},
			[]string{"spec.type"}, 0},
		{"workspace cluster changed", tenant, "workspaces", "",
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w")), Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: "abc"}},
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w")), Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: "def"}},
			[]string{"spec.cluster"}, 0},
		{"workspace cluster set once", tenant, "workspaces", "",
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w"))},
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w")), Spec: tenancyv1alpha1.WorkspaceSpec{Cluster: "abc", URL: "https://x"}},
			nil, 2},
		{"workspace labels only", tenant, "workspaces", "",
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(om("w"))},
			&tenancyv1alpha1.Workspace{ObjectMeta: stored(metav1.ObjectMeta{Name: "w", Labels: map[string]string{"a": "b"}})},
			nil, 1},
		{"apibinding reference changed", apis, "apibindings", "",
			&apisv1alpha2.APIBinding{ObjectMeta: stored(om("b")), Spec: apisv1alpha2.APIBindingSpec{Reference: ref("e1")}},
			&apisv1alpha2.APIBinding{ObjectMeta: stored(om("b")), Spec: apisv1alpha2.APIBindingSpec{Reference: ref("e2")}},
			[]string{"spec.reference"}, 0},
		{"apiresourceschema spec changed", apisv1alpha1.SchemeGroupVersion, "apiresourceschemas", "",
			&apisv1alpha1.APIResourceSchema{ObjectMeta: stored(om("v1.widgets.example.com")), Spec: apisv1alpha1.APIResourceSchemaSpec{Group: "example.com"}},
			&apisv1alpha1.APIResourceSchema{ObjectMeta: stored(om("v1.widgets.example.com")), Spec: apisv1alpha1.APIResourceSchemaSpec{Group: "other.com"}},
			[]string{"spec"}, 0},
		{"rolebinding roleRef changed", rbacGV, "rolebindings", "default",
			&rbacv1.RoleBinding{ObjectMeta: stored(nsom("b")), RoleRef: roleRef("view")},
			&rbacv1.RoleBinding{ObjectMeta: stored(nsom("b")), RoleRef: roleRef("edit")},
			[]string{"roleRef"}, 0},
		{"configmap renamed", core, "configmaps", "default",
			&corev1.ConfigMap{ObjectMeta: stored(nsom("a"))}, &corev1.ConfigMap{ObjectMeta: stored(nsom("b"))},
			[]string{"metadata.name"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := store(t, s, tc.gv, tc.resource)
			err := rest.BeforeUpdate(st.UpdateStrategy, requestContext(tc.namespace), tc.obj, tc.old)
			got := invalidFields(t, "update "+tc.name, err)
			if !slices.Equal(got, tc.wantFields) {
				t.Errorf("update %s (%s): refused fields %v (err %v), want %v", tc.gv.WithResource(tc.resource), tc.name, got, err, tc.wantFields)
			}
			if g := tc.obj.(metav1.Object).GetGeneration(); tc.wantGeneration != 0 && g != tc.wantGeneration {
				t.Errorf("update %s (%s): generation %d, want %d", tc.gv.WithResource(tc.resource), tc.name, g, tc.wantGeneration)
			}
		})
	}
}

// TestStatusIsWrittenThroughItsSubresource checks that the main resource
// keeps the stored status and the status subresource the stored spec.
func TestStatusIsWrittenThroughItsSubresource(t *testing.T) {
	s := newTestStorage(t)
	old := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "w", UID: "u", ResourceVersion: "1", Generation: 1},
		Spec:   tenancyv1alpha1.WorkspaceSpec{URL: "https://old"},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseScheduling}}
	changed := func() *tenancyv1alpha1.Workspace {
		w := old.DeepCopy()
		w.Spec.URL, w.Status.Phase = "https://new", corev1alpha1.LogicalClusterPhaseReady
		return w
	}

	main := changed()
	if err := rest.BeforeUpdate(store(t, s, tenant, "workspaces").UpdateStrategy, requestContext(""), main, old); err != nil {
		t.Fatalf("update workspace: %v", err)
	}
	if main.Spec.URL != "https://new" || main.Status.Phase != corev1alpha1.LogicalClusterPhaseScheduling || main.Generation != 2 {
		t.Errorf("update of workspaces: url %q phase %q generation %d; want the new spec, the stored status, generation 2",
			main.Spec.URL, main.Status.Phase, main.Generation)
	}

	status := changed()
	if err := rest.BeforeUpdate(store(t, s, tenant, "workspaces/status").UpdateStrategy, requestContext(""), status, old); err != nil {
		t.Fatalf("update workspace status: %v", err)
	}
	if status.Spec.URL != "https://old" || status.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || status.Generation != 1 {
		t.Errorf("update of workspaces/status: url %q phase %q generation %d; want the stored spec, the new status, generation 1",
			status.Spec.URL, status.Status.Phase, status.Generation)
	}
}

// TestQuotaStatusKeepsStoredSpec: a status write carries the stored spec,
// which is not validated again (a spec stored before a rule existed must
// not block the quota's status).
func TestQuotaStatusKeepsStoredSpec(t *testing.T) {
	s := newTestStorage(t)
	old := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default", UID: "u", ResourceVersion: "1"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"foo": apiresource.MustParse("1")}}}
	status := old.DeepCopy()
	status.Status.Used = corev1.ResourceList{"foo": apiresource.MustParse("0")}
	if err := rest.BeforeUpdate(store(t, s, core, "resourcequotas/status").UpdateStrategy, requestContext("default"), status, old); err != nil {
		t.Errorf("status write of a quota whose stored spec predates validation: %v, want accepted", err)
	}
	spec := old.DeepCopy()
	spec.Spec.Hard["configmaps"] = apiresource.MustParse("1")
	err := rest.BeforeUpdate(store(t, s, core, "resourcequotas").UpdateStrategy, requestContext("default"), spec, old)
	if got := invalidFields(t, "update of the quota's spec", err); !slices.Equal(got, []string{"spec.hard[foo]"}) {
		t.Errorf("update of the quota's spec: refused fields %v (err %v), want [spec.hard[foo]]", got, err)
	}
}

func TestTables(t *testing.T) {
	s := newTestStorage(t)
	created := metav1.NewTime(time.Now().Add(-72 * time.Hour))
	for _, tc := range []struct {
		gv       schema.GroupVersion
		resource string
		obj      runtime.Object
		columns  []string
		cells    []any // without the age
	}{
		{core, "configmaps", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", CreationTimestamp: created},
			Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": nil}},
			[]string{"Name", "Data", "Age"}, []any{"cm", int64(2)}},
		{core, "secrets", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: created}, Type: corev1.SecretTypeOpaque},
			[]string{"Name", "Type", "Data", "Age"}, []any{"s", "Opaque", int64(0)}},
		{rbacGV, "clusterrolebindings", &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created},
			RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}},
			[]string{"Name", "Role", "Age"}, []any{"b", "ClusterRole/admin"}},
		{core, "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", CreationTimestamp: created},
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}},
			[]string{"Name", "Status", "Age"}, []any{"ns", "Active"}},
		{tenant, "workspaces", &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "w", CreationTimestamp: created},
			Spec:   tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "universal"}, URL: "https://x/clusters/abc"},
			Status: tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseReady}},
			[]string{"Name", "Type", "Region", "Phase", "URL", "Age"}, []any{"w", "universal", nil, "Ready", "https://x/clusters/abc"}},
		{corev1alpha1.SchemeGroupVersion, "logicalclusters", &corev1alpha1.LogicalCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster", CreationTimestamp: created},
			Status: corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseInitializing, URL: "https://x/clusters/abc"}},
			[]string{"Name", "Phase", "URL", "Age"}, []any{"cluster", "Initializing", "https://x/clusters/abc"}},
		{apis, "apibindings", &apisv1alpha2.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: created},
			Spec:   apisv1alpha2.APIBindingSpec{Reference: apisv1alpha2.BindingReference{Export: &apisv1alpha2.ExportBindingReference{Path: "root:p", Name: "e"}}},
			Status: apisv1alpha2.APIBindingStatus{Phase: apisv1alpha2.APIBindingPhaseBound}},
			[]string{"Name", "Export", "Phase", "Age"}, []any{"b", "root:p:e", "Bound"}},
		{apisv1alpha1.SchemeGroupVersion, "apiexports", &apisv1alpha2.APIExport{ObjectMeta: metav1.ObjectMeta{Name: "e", CreationTimestamp: created},
			Status: apisv1alpha2.APIExportStatus{IdentityHash: "abc"}},
			[]string{"Name", "Identity", "Age"}, []any{"e", "abc"}},
	} {
		what := tc.gv.WithResource(tc.resource).String()
		st := store(t, s, tc.gv, tc.resource)
		table, err := st.ConvertToTable(context.Background(), tc.obj, nil)
		if err != nil {
			t.Errorf("%s: table: %v", what, err)
			continue
		}
		var cols []string
		for _, c := range table.ColumnDefinitions {
			cols = append(cols, c.Name)
		}
		if !slices.Equal(cols, tc.columns) {
			t.Errorf("%s: columns %v, want %v", what, cols, tc.columns)
		}
		if len(table.Rows) != 1 {
			t.Fatalf("%s: %d rows, want 1", what, len(table.Rows))
		}
		cells := table.Rows[0].Cells
		if want := append(slices.Clone(tc.cells), "3d"); !reflect.DeepEqual(cells, want) {
			t.Errorf("%s: cells %#v, want %#v", what, cells, want)
		}
	}
}

func TestTableOfList(t *testing.T) {
	st := store(t, newTestStorage(t), core, "configmaps")
	list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "42", Continue: "next"},
		Items: []corev1.ConfigMap{{ObjectMeta: om("a")}, {ObjectMeta: om("b")}}}
	table, err := st.ConvertToTable(context.Background(), list, nil)
	if err != nil {
		t.Fatalf("table of a list: %v", err)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[0] != "a" || table.Rows[1].Cells[0] != "b" || table.Rows[0].Cells[2] != "<unknown>" ||
		table.ResourceVersion != "42" || table.Continue != "next" {
		t.Errorf("table of a list: rows %v, resourceVersion %q, continue %q; want rows a and b (age <unknown>), 42, next",
			table.Rows, table.ResourceVersion, table.Continue)
	}
}

// TestDiscoveryNames checks the short names and categories kubectl uses.
func TestDiscoveryNames(t *testing.T) {
	s := newTestStorage(t)
	for _, tc := range []struct {
		gv         schema.GroupVersion
		resource   string
		shortNames []string
		categories []string
	}{
		{core, "configmaps", []string{"cm"}, nil},
		{tenant, "workspaces", []string{"ws"}, []string{"kcp"}},
		{apisv1alpha1.SchemeGroupVersion, "apibindings", nil, []string{"kcp"}},
		{certificatesv1.SchemeGroupVersion, "certificatesigningrequests", []string{"csr"}, nil},
	} {
		n, ok := s[tc.gv][tc.resource].(*named)
		if !ok {
			t.Errorf("%s: registry %T, want one with discovery names", tc.gv.WithResource(tc.resource), s[tc.gv][tc.resource])
			continue
		}
		if !slices.Equal(n.ShortNames(), tc.shortNames) || !slices.Equal(n.Categories(), tc.categories) {
			t.Errorf("%s: short names %v categories %v, want %v %v", tc.gv.WithResource(tc.resource), n.ShortNames(), n.Categories(), tc.shortNames, tc.categories)
		}
	}
	for _, path := range []string{"workspaces/status", "certificatesigningrequests/approval", "namespaces/finalize"} {
		found := false
		for _, byPath := range s {
			_, ok := byPath[path]
			found = found || ok
		}
		if !found {
			t.Errorf("no registry serves %s", path)
		}
	}
}
