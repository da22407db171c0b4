package charts

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// serviceMonitor is the part of prometheus-operator's ServiceMonitor the
// charts write, so a field it does not know fails the strict decoding.
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port     string `json:"port"`
			Path     string `json:"path,omitempty"`
			Interval string `json:"interval,omitempty"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// certificate and issuer are the parts of cert-manager's Certificate and CA
// Issuer the core chart writes (core.certManager).
type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretName  string   `json:"secretName"`
		CommonName  string   `json:"commonName,omitempty"`
		Duration    string   `json:"duration,omitempty"`
		RenewBefore string   `json:"renewBefore,omitempty"`
		DNSNames    []string `json:"dnsNames"`
		IPAddresses []string `json:"ipAddresses,omitempty"`
		Usages      []string `json:"usages,omitempty"`
		PrivateKey  struct {
			Algorithm      string `json:"algorithm"`
			Size           int    `json:"size"`
			RotationPolicy string `json:"rotationPolicy"`
		} `json:"privateKey"`
		IssuerRef struct {
			Name  string `json:"name"`
			Kind  string `json:"kind"`
			Group string `json:"group"`
		} `json:"issuerRef"`
	} `json:"spec"`
}

type issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		CA struct {
			SecretName string `json:"secretName"`
		} `json:"ca"`
	} `json:"spec"`
}

// newObject is the Go type of each kind the charts render.
func newObject(apiVersion, kind string) (any, error) {
	switch apiVersion + "/" + kind {
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}, nil
	case "apps/v1/StatefulSet":
		return &appsv1.StatefulSet{}, nil
	case "v1/Service":
		return &corev1.Service{}, nil
	case "v1/Secret":
		return &corev1.Secret{}, nil
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}, nil
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}, nil
	case "v1/PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}, nil
	case "v1/Pod":
		return &corev1.Pod{}, nil
	case "rbac.authorization.k8s.io/v1/Role":
		return &rbacv1.Role{}, nil
	case "rbac.authorization.k8s.io/v1/RoleBinding":
		return &rbacv1.RoleBinding{}, nil
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, nil
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, nil
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &serviceMonitor{}, nil
	case "cert-manager.io/v1/Certificate":
		return &certificate{}, nil
	case "cert-manager.io/v1/Issuer":
		return &issuer{}, nil
	}
	return nil, fmt.Errorf("no Go type for %s %s", apiVersion, kind)
}

// object is one rendered object, decoded strictly into its type.
type object struct {
	Kind, Name string
	Obj        any
}

// decodeStrict splits rendered manifests and decodes each object into its
// Kubernetes type, refusing unknown and duplicate fields.
func decodeStrict(manifests string) ([]object, error) {
	var out []object
	r := utilyaml.NewYAMLReader(bufioReader(manifests))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, err
		}
		obj, err := newObject(meta.APIVersion, meta.Kind)
		if err != nil {
			return nil, fmt.Errorf("%w:\n%s", err, doc)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("%s: %w:\n%s", meta.Kind, err, doc)
		}
		name := ""
		if m, ok := obj.(metav1.Object); ok {
			name = m.GetName()
		} else if sm, ok := obj.(*serviceMonitor); ok {
			name = sm.Name
		}
		if name == "" {
			return nil, fmt.Errorf("%s without a name:\n%s", meta.Kind, doc)
		}
		out = append(out, object{Kind: meta.Kind, Name: name, Obj: obj})
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.Bytes()
}

func find[T any](t testing.TB, objs []object, kind, name string) T {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Name == name {
			return o.Obj.(T)
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	var zero T
	return zero
}

// podSpecs are the pod templates of every workload, by object name.
func podSpecs(objs []object) map[string]*corev1.PodSpec {
	out := map[string]*corev1.PodSpec{}
	for _, o := range objs {
		switch w := o.Obj.(type) {
		case *appsv1.Deployment:
			out[o.Kind+"/"+o.Name] = &w.Spec.Template.Spec
		case *appsv1.StatefulSet:
			out[o.Kind+"/"+o.Name] = &w.Spec.Template.Spec
		case *corev1.Pod:
			out[o.Kind+"/"+o.Name] = &w.Spec
		}
	}
	return out
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
