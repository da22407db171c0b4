package builtin

import (
	"context"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/meshplane/meshplane/core/internal/quota"
)

// resource describes one built-in resource served in every cluster.
type resource struct {
	gv schema.GroupVersion
	// alsoIn lists further versions the same storage is served in.
	alsoIn     []schema.GroupVersion
	plural     string
	singular   string
	kind       string
	namespaced bool
	shortNames []string
	categories []string
	hasStatus  bool
	// statusOnCreate keeps the status given on create (objects the
	// server creates whole, such as LogicalClusters).
	statusOnCreate bool
	// extraStatus names further subresources written like status
	// (certificatesigningrequests/approval).
	extraStatus []string
	// rebaseStatus may apply a status write sent on an older object to
	// the stored one (current) instead of refusing it with a conflict; it
	// returns updated when it does not.
	rebaseStatus func(ctx context.Context, current, updated runtime.Object) runtime.Object
	// filterList and filterWatch narrow what a list or watch shows,
	// depending on the request (a virtual workspace's filter).
	filterList  func(ctx context.Context, list runtime.Object) (runtime.Object, error)
	filterWatch func(ctx context.Context, w watch.Interface) watch.Interface
	newFunc     func() runtime.Object
	newList     func() runtime.Object
	nameFn      apivalidation.ValidateNameFunc
	defaults    func(obj runtime.Object)
	validate    func(obj runtime.Object) field.ErrorList
	// validateSpec checks the spec on creates and updates but not on
	// status writes, which keep the stored spec (one stored before a
	// rule was added must not block them).
	validateSpec func(obj runtime.Object) field.ErrorList
	fields       func(obj runtime.Object) fields.Set
	columns      []column
	// onCreate fills in what the server sets on create (after defaults).
	onCreate func(ctx context.Context, obj runtime.Object)
	// validateUpdate checks transitions (immutable fields).
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// storagePrefix overrides the etcd prefix (default <group>/<plural>).
	storagePrefix string
}

// maxDataSize is kube-apiserver's limit on a ConfigMap's or Secret's data.
const maxDataSize = 1 * 1024 * 1024

var resources = []resource{
	{gv: corev1.SchemeGroupVersion, plural: "configmaps", singular: "configmap", kind: "ConfigMap", namespaced: true,
		shortNames: []string{"cm"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.ConfigMap{} }, newList: func() runtime.Object { return &corev1.ConfigMapList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			cm := obj.(*corev1.ConfigMap)
			return validateData(cm.Data, cm.BinaryData)
		},
		columns: []column{{"Data", "integer", func(o runtime.Object) any {
			cm := o.(*corev1.ConfigMap)
			return int64(len(cm.Data) + len(cm.BinaryData))
		}}}},
	{gv: corev1.SchemeGroupVersion, plural: "secrets", singular: "secret", kind: "Secret", namespaced: true,
		nameFn:  apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.Secret{} }, newList: func() runtime.Object { return &corev1.SecretList{} },
		defaults: func(obj runtime.Object) {
			s := obj.(*corev1.Secret)
			if s.Type == "" {
				s.Type = corev1.SecretTypeOpaque
			}
			for k, v := range s.StringData {
				if s.Data == nil {
					s.Data = map[string][]byte{}
				}
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateData(nil, obj.(*corev1.Secret).Data)
		},
		fields: func(obj runtime.Object) fields.Set { return fields.Set{"type": string(obj.(*corev1.Secret).Type)} },
		columns: []column{
			{"Type", "string", func(o runtime.Object) any { return string(o.(*corev1.Secret).Type) }},
			{"Data", "integer", func(o runtime.Object) any { return int64(len(o.(*corev1.Secret).Data)) }},
		}},
	{gv: corev1.SchemeGroupVersion, plural: "serviceaccounts", singular: "serviceaccount", kind: "ServiceAccount", namespaced: true,
		shortNames: []string{"sa"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.ServiceAccount{} }, newList: func() runtime.Object { return &corev1.ServiceAccountList{} },
		columns: []column{{"Secrets", "integer", func(o runtime.Object) any { return int64(len(o.(*corev1.ServiceAccount).Secrets)) }}}},
	{gv: corev1.SchemeGroupVersion, plural: "events", singular: "event", kind: "Event", namespaced: true,
		shortNames: []string{"ev"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.Event{} }, newList: func() runtime.Object { return &corev1.EventList{} },
		fields: func(obj runtime.Object) fields.Set {
			e := obj.(*corev1.Event)
			return fields.Set{
				"involvedObject.kind": e.InvolvedObject.Kind, "involvedObject.namespace": e.InvolvedObject.Namespace,
				"involvedObject.name": e.InvolvedObject.Name, "involvedObject.uid": string(e.InvolvedObject.UID),
				"involvedObject.apiVersion": e.InvolvedObject.APIVersion, "involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
				"involvedObject.fieldPath": e.InvolvedObject.FieldPath, "reason": e.Reason,
				"reportingComponent": e.ReportingController, "source": e.Source.Component, "type": e.Type,
			}
		},
		columns: []column{
			{"Type", "string", func(o runtime.Object) any { return o.(*corev1.Event).Type }},
			{"Reason", "string", func(o runtime.Object) any { return o.(*corev1.Event).Reason }},
			{"Message", "string", func(o runtime.Object) any { return o.(*corev1.Event).Message }},
		}},
	{gv: corev1.SchemeGroupVersion, plural: "limitranges", singular: "limitrange", kind: "LimitRange", namespaced: true,
		shortNames: []string{"limits"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.LimitRange{} }, newList: func() runtime.Object { return &corev1.LimitRangeList{} }},
	{gv: corev1.SchemeGroupVersion, plural: "resourcequotas", singular: "resourcequota", kind: "ResourceQuota", namespaced: true,
		shortNames: []string{"quota"}, hasStatus: true, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &corev1.ResourceQuota{} }, newList: func() runtime.Object { return &corev1.ResourceQuotaList{} },
		validateSpec: func(obj runtime.Object) field.ErrorList {
			return quota.ValidateHard(obj.(*corev1.ResourceQuota).Spec.Hard, field.NewPath("spec", "hard"))
		}},

	{gv: rbacv1.SchemeGroupVersion, plural: "roles", singular: "role", kind: "Role", namespaced: true,
		nameFn:  path.ValidatePathSegmentName,
		newFunc: func() runtime.Object { return &rbacv1.Role{} }, newList: func() runtime.Object { return &rbacv1.RoleList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			return validateRules(obj.(*rbacv1.Role).Rules, false)
		}},
	{gv: rbacv1.SchemeGroupVersion, plural: "rolebindings", singular: "rolebinding", kind: "RoleBinding", namespaced: true,
		nameFn:  path.ValidatePathSegmentName,
		newFunc: func() runtime.Object { return &rbacv1.RoleBinding{} }, newList: func() runtime.Object { return &rbacv1.RoleBindingList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			b := obj.(*rbacv1.RoleBinding)
			return validateBinding(b.RoleRef, b.Subjects, true)
		},
		columns: []column{{"Role", "string", func(o runtime.Object) any {
			r := o.(*rbacv1.RoleBinding).RoleRef
			return r.Kind + "/" + r.Name
		}}}},
	{gv: rbacv1.SchemeGroupVersion, plural: "clusterroles", singular: "clusterrole", kind: "ClusterRole",
		nameFn:  path.ValidatePathSegmentName,
		newFunc: func() runtime.Object { return &rbacv1.ClusterRole{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			return validateRules(obj.(*rbacv1.ClusterRole).Rules, true)
		}},
	{gv: rbacv1.SchemeGroupVersion, plural: "clusterrolebindings", singular: "clusterrolebinding", kind: "ClusterRoleBinding",
		nameFn:  path.ValidatePathSegmentName,
		newFunc: func() runtime.Object { return &rbacv1.ClusterRoleBinding{} }, newList: func() runtime.Object { return &rbacv1.ClusterRoleBindingList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			b := obj.(*rbacv1.ClusterRoleBinding)
			return validateBinding(b.RoleRef, b.Subjects, false)
		},
		columns: []column{{"Role", "string", func(o runtime.Object) any {
			r := o.(*rbacv1.ClusterRoleBinding).RoleRef
			return r.Kind + "/" + r.Name
		}}}},

	{gv: coordinationv1.SchemeGroupVersion, plural: "leases", singular: "lease", kind: "Lease", namespaced: true,
		nameFn:  apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &coordinationv1.Lease{} }, newList: func() runtime.Object { return &coordinationv1.LeaseList{} },
		columns: []column{{"Holder", "string", func(o runtime.Object) any {
			if h := o.(*coordinationv1.Lease).Spec.HolderIdentity; h != nil {
				return *h
			}
			return ""
		}}}},

	// events.k8s.io/v1 Events are the core/v1 Events (events.go).

	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "validatingwebhookconfigurations", singular: "validatingwebhookconfiguration",
		kind: "ValidatingWebhookConfiguration", categories: []string{"api-extensions"}, nameFn: apivalidation.NameIsDNSSubdomain, validate: validateValidatingWebhookConfiguration,
		newFunc: func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		newList: func() runtime.Object { return &admissionregistrationv1.ValidatingWebhookConfigurationList{} }},
	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "mutatingwebhookconfigurations", singular: "mutatingwebhookconfiguration",
		kind: "MutatingWebhookConfiguration", categories: []string{"api-extensions"}, nameFn: apivalidation.NameIsDNSSubdomain, validate: validateMutatingWebhookConfiguration,
		newFunc: func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		newList: func() runtime.Object { return &admissionregistrationv1.MutatingWebhookConfigurationList{} }},
	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "validatingadmissionpolicies", singular: "validatingadmissionpolicy",
		kind: "ValidatingAdmissionPolicy", categories: []string{"api-extensions"}, hasStatus: true, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
		newList: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyList{} }},
	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "validatingadmissionpolicybindings", singular: "validatingadmissionpolicybinding",
		kind: "ValidatingAdmissionPolicyBinding", categories: []string{"api-extensions"}, nameFn: apivalidation.NameIsDNSSubdomain, validate: validateValidatingAdmissionPolicyBinding,
		newFunc: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
		newList: func() runtime.Object { return &admissionregistrationv1.ValidatingAdmissionPolicyBindingList{} }},
	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "mutatingadmissionpolicies", singular: "mutatingadmissionpolicy",
		kind: "MutatingAdmissionPolicy", categories: []string{"api-extensions"}, nameFn: apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicy{} },
		newList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyList{} }},
	{gv: admissionregistrationv1.SchemeGroupVersion, plural: "mutatingadmissionpolicybindings", singular: "mutatingadmissionpolicybinding",
		kind: "MutatingAdmissionPolicyBinding", categories: []string{"api-extensions"}, nameFn: apivalidation.NameIsDNSSubdomain, validate: validateMutatingAdmissionPolicyBinding,
		newFunc: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBinding{} },
		newList: func() runtime.Object { return &admissionregistrationv1.MutatingAdmissionPolicyBindingList{} }},

	{gv: certificatesv1.SchemeGroupVersion, plural: "certificatesigningrequests", singular: "certificatesigningrequest",
		kind: "CertificateSigningRequest", shortNames: []string{"csr"}, hasStatus: true, extraStatus: []string{"approval"},
		nameFn:  apivalidation.NameIsDNSSubdomain,
		newFunc: func() runtime.Object { return &certificatesv1.CertificateSigningRequest{} },
		newList: func() runtime.Object { return &certificatesv1.CertificateSigningRequestList{} },
		validate: func(obj runtime.Object) field.ErrorList {
			csr := obj.(*certificatesv1.CertificateSigningRequest)
			var errs field.ErrorList
			if len(csr.Spec.Request) == 0 {
				errs = append(errs, field.Required(field.NewPath("spec", "request"), ""))
			}
			if csr.Spec.SignerName == "" {
				errs = append(errs, field.Required(field.NewPath("spec", "signerName"), ""))
			}
			return errs
		},
		columns: []column{{"SignerName", "string", func(o runtime.Object) any {
			return o.(*certificatesv1.CertificateSigningRequest).Spec.SignerName
		}}}},
}

func validateData(data map[string]string, binary map[string][]byte) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for k, v := range data {
		for _, msg := range utilvalidation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
		size += len(k) + len(v)
	}
	for k, v := range binary {
		for _, msg := range utilvalidation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
		if _, dup := data[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
		size += len(k) + len(v)
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", maxDataSize))
	}
	return errs
}

func validateRules(rules []rbacv1.PolicyRule, clusterScoped bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		p := field.NewPath("rules").Index(i)
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.NonResourceURLs) > 0 {
			if !clusterScoped {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

func validateBinding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(p.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	switch {
	case ref.Kind == "ClusterRole":
	case ref.Kind == "Role" && namespaced:
	default:
		allowed := []string{"ClusterRole"}
		if namespaced {
			allowed = append(allowed, "Role")
		}
		errs = append(errs, field.NotSupported(p.Child("kind"), ref.Kind, allowed))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	for i, s := range subjects {
		sp := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind:
		default:
			errs = append(errs, field.NotSupported(sp.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
		}
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == "" && !namespaced {
			errs = append(errs, field.Required(sp.Child("namespace"), ""))
		}
	}
	return errs
}

// validateRoleRefUnchanged refuses changing a binding's roleRef, as kube does.
func validateRoleRefUnchanged(obj, old runtime.Object) field.ErrorList {
	var n, o rbacv1.RoleRef
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		n, o = b.RoleRef, old.(*rbacv1.RoleBinding).RoleRef
	case *rbacv1.ClusterRoleBinding:
		n, o = b.RoleRef, old.(*rbacv1.ClusterRoleBinding).RoleRef
	default:
		return nil
	}
	if n != o {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), n, fmt.Sprintf("cannot change roleRef"))}
	}
	return nil
}
