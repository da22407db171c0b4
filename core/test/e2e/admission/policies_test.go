package admission

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// maxKeysPolicy refuses configmaps in namespace work with more data keys
// than its param ConfigMap's data.max, with the binding's paramRef.
const maxKeysPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-keys
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' keys, got ' + string(size(object.data))"
    reason: Invalid
  auditAnnotations:
  - key: keys
    valueExpression: "string(has(object.data) ? size(object.data) : 0)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-keys
spec:
  policyName: max-keys
  validationActions: [Deny]
  paramRef:
    name: limits
    namespace: params
    parameterNotFoundAction: Deny
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: work}
`

// A ValidatingAdmissionPolicy with a binding and paramRef refuses in its
// cluster only.
func TestValidatingAdmissionPolicyOnlyInItsCluster(t *testing.T) {
	t.Parallel()
	s := server(t)
	_, ka := newCluster(t, s, "adm-vap-a", "work")
	_, kb := newCluster(t, s, "adm-vap-b", "work")
	ka.Run(t, "create", "namespace", "params")
	ka.Run(t, "create", "configmap", "limits", "-n", "params", "--from-literal=max=2")
	ka.RunStdin(t, maxKeysPolicy, "apply", "-f", "-")

	n := 0
	var stderr string
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "the policy to refuse a configmap with 3 keys", func() (bool, string) {
		n++
		_, stderr, _ = ka.RunErr(t, "create", "configmap", fmt.Sprintf("big-%d", n), "-n", "work",
			"--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3")
		return strings.Contains(stderr, "at most 2 keys, got 3"), stderr
	})
	framework.RequireContains(t, stderr, "ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys' denied request", "kubectl's error")
	ka.Run(t, "create", "configmap", "small", "-n", "work", "--from-literal=a=1")
	// Outside the binding's namespaces the policy does not apply.
	ka.Run(t, "create", "configmap", "big-elsewhere", "-n", "params", "--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3")
	// Another cluster is not concerned.
	kb.Run(t, "create", "configmap", "big", "-n", "work", "--from-literal=a=1", "--from-literal=b=2", "--from-literal=c=3")

	// Without its param the binding denies (parameterNotFoundAction Deny).
	ka.Run(t, "delete", "configmap", "limits", "-n", "params")
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a missing param to deny", func() (bool, string) {
		n++
		_, stderr, _ = ka.RunErr(t, "create", "configmap", fmt.Sprintf("small-%d", n), "-n", "work", "--from-literal=a=1")
		return strings.Contains(stderr, "no params found"), stderr
	})
}

const labelPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: label
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}'
  - patchType: JSONPatch
    jsonPatch:
      expression: '[JSONPatch{op: "add", path: "/data", value: {"added": "by-json-patch"}}]'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: label
spec:
  policyName: label
`

// A MutatingAdmissionPolicy mutates creates in its cluster only.
func TestMutatingAdmissionPolicy(t *testing.T) {
	t.Parallel()
	s := server(t)
	_, ka := newCluster(t, s, "adm-map-a", "work")
	_, kb := newCluster(t, s, "adm-map-b", "work")
	ka.RunStdin(t, labelPolicy, "apply", "-f", "-")
	n := 0
	framework.Eventually(t, 30*time.Second, 200*time.Millisecond, "a created configmap to be mutated by the policy", func() (bool, string) {
		n++
		name := fmt.Sprintf("cm-%d", n)
		ka.Run(t, "create", "configmap", name, "-n", "work")
		out := ka.Run(t, "get", "configmap", name, "-n", "work", "-o", "jsonpath={.metadata.labels.mutated-by}/{.data.added}")
		return out == "policy/by-json-patch", "label/data: " + out
	})
	kb.Run(t, "create", "configmap", "plain", "-n", "work")
	if out := kb.Run(t, "get", "configmap", "plain", "-n", "work", "-o", "jsonpath={.metadata.labels}{.data}"); out != "" {
		t.Errorf("a configmap of another cluster was mutated: labels and data %q", out)
	}
}

const noRobberyPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: no-robbery
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["wildwest.dev"]
      apiVersions: ["*"]
      operations: ["CREATE", "UPDATE"]
      resources: ["cowboys"]
  validations:
  - expression: "object.spec.intent != 'rob'"
    message: "cowboys may not rob"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: no-robbery
spec:
  policyName: no-robbery
  validationActions: [Deny]
`

// A ValidatingAdmissionPolicy in an APIExport's workspace applies to the
// export's resources in a consumer workspace.
func TestExportPolicyAppliesToConsumers(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "adm-export-vap")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.ExportCRD(t, provider, cowboyCRD, "wildwest.dev")
	s.KubectlFor(provider.Path).RunStdin(t, noRobberyPolicy, "apply", "-f", "-")
	s.Bind(t, consumer, "cowboys", provider, "wildwest.dev", nil)
	kc := s.KubectlFor(consumer.Path)
	kc.Run(t, "create", "namespace", "ranch")
	cowboy := func(name, intent string) string {
		return fmt.Sprintf("apiVersion: wildwest.dev/v1alpha1\nkind: Cowboy\nmetadata: {name: %s, namespace: ranch}\nspec: {intent: %s}\n", name, intent)
	}
	n := 0
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the provider's policy to refuse a consumer's robbing cowboy", func() (bool, string) {
		n++
		_, stderr, _ := kc.RunStdinErr(t, cowboy(fmt.Sprintf("robber-%d", n), "rob"), "create", "-f", "-")
		return strings.Contains(stderr, "cowboys may not rob"), stderr
	})
	kc.RunStdin(t, cowboy("rider", "ride"), "create", "-f", "-")
}

const creatorPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: creator
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - apiGroups: ["wildwest.dev"]
      apiVersions: ["*"]
      operations: ["CREATE"]
      resources: ["cowboys"]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{spec: Object.spec{intent: "created by " + request.userInfo.username}}'
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: creator
spec:
  policyName: creator
`

// A MutatingAdmissionPolicy in an APIExport's workspace sets a field of
// the export's resources from the requesting user in a consumer
// workspace (how a provider records spec.creator).
func TestExportMutatingPolicySetsCreator(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "adm-export-map")
	ws := s.CreateWorkspaces(t, org.Path, "provider", "consumer")
	provider, consumer := ws[0], ws[1]
	s.ExportCRD(t, provider, cowboyCRD, "wildwest.dev")
	s.KubectlFor(provider.Path).RunStdin(t, creatorPolicy, "apply", "-f", "-")
	s.Bind(t, consumer, "cowboys", provider, "wildwest.dev", nil)
	kc := s.KubectlFor(consumer.Path)
	kc.Run(t, "create", "namespace", "ranch")
	n := 0
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the provider's policy to set spec.intent from the user", func() (bool, string) {
		n++
		name := fmt.Sprintf("cowboy-%d", n)
		_, stderr, err := kc.RunStdinErr(t, fmt.Sprintf("apiVersion: wildwest.dev/v1alpha1\nkind: Cowboy\nmetadata: {name: %s, namespace: ranch}\nspec: {intent: ride}\n", name),
			"create", "-f", "-")
		if err != nil {
			return false, stderr
		}
		out := kc.Run(t, "get", "cowboy", name, "-n", "ranch", "-o", "jsonpath={.spec.intent}")
		return out == "created by shard-admin", "spec.intent: " + out
	})
}

// TestValidatingAdmissionPolicyStatus: as kube's status controller, the
// core fills in status.observedGeneration and status.typeChecking of a
// ValidatingAdmissionPolicy: an expression that reads a field the matched
// kind does not have gets a warning.
func TestValidatingAdmissionPolicyStatus(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "adm-vap-status")
	k := s.KubectlFor(s.CreateWorkspaces(t, org.Path, "w")[0].Path)
	k.RunStdin(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: typed}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}]
  validations:
  - expression: "object.spec.replicas > 1"
  - expression: "has(object.data)"
`, "create", "-f", "-")
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the policy's status", func() (bool, string) {
		out := k.Run(t, "get", "validatingadmissionpolicy", "typed", "-o", "jsonpath={.status.observedGeneration}|{.status.typeChecking.expressionWarnings[*].fieldRef}|{.status.typeChecking.expressionWarnings[*].warning}")
		return strings.HasPrefix(out, "1|spec.validations[0].expression|") && strings.Contains(out, "undefined field 'spec'"), out
	})
}

// TestValidatingAdmissionPolicyStatusCustomKind: the type checking of a
// policy on a custom kind uses the schema of the workspace's CRD (kube
// reads it from its OpenAPI): a field the schema does not have gets a
// warning, the schema's fields and the object's metadata do not.
func TestValidatingAdmissionPolicyStatusCustomKind(t *testing.T) {
	t.Parallel()
	s := server(t)
	org := s.CreateOrg(t, "adm-vap-crd")
	k := s.KubectlFor(s.CreateWorkspaces(t, org.Path, "w")[0].Path)
	k.RunStdin(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.typed.example.com}
spec:
  group: typed.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
`, "create", "-f", "-")
	k.WaitForCRD(t, "widgets.typed.example.com", "widgets", "default")
	k.RunStdin(t, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: typed-widgets}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [typed.example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]
  validations:
  - expression: "object.spec.colour == 'red'"
  - expression: "object.spec.size > 1 && object.metadata.name != ''"
`, "create", "-f", "-")
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, "the policy's status", func() (bool, string) {
		out := k.Run(t, "get", "validatingadmissionpolicy", "typed-widgets", "-o", "jsonpath={.status.observedGeneration}|{.status.typeChecking.expressionWarnings[*].fieldRef}|{.status.typeChecking.expressionWarnings[*].warning}")
		return strings.HasPrefix(out, "1|spec.validations[0].expression|") && strings.Contains(out, "undefined field 'colour'"), out
	})
}
