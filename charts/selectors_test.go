package charts

import (
	"testing"

	"fmt"
	"k8s.io/apimachinery/pkg/util/intstr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// checkSelectors: what the API server and the controllers would find
// wrong with labels: a workload's selector must match its pod template,
// and every Service, PodDisruptionBudget, NetworkPolicy and ServiceMonitor
// must select some pod (a Service's target ports must be ports of those
// pods), or it silently does nothing.
func checkSelectors(objs []object) []error {
	type podTemplate struct {
		name   string
		labels labels.Set
		spec   corev1.PodSpec
	}
	var pods []podTemplate
	var errs []error
	for _, o := range objs {
		var sel *metav1.LabelSelector
		var tmpl corev1.PodTemplateSpec
		switch w := o.Obj.(type) {
		case *appsv1.Deployment:
			sel, tmpl = w.Spec.Selector, w.Spec.Template
		case *appsv1.StatefulSet:
			sel, tmpl = w.Spec.Selector, w.Spec.Template
		default:
			continue
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(labels.Set(tmpl.Labels)) {
			errs = append(errs, fmt.Errorf("%s/%s: selector %v does not match its pod labels %v (%v)", o.Kind, o.Name, sel, tmpl.Labels, err))
		}
		pods = append(pods, podTemplate{o.Kind + "/" + o.Name, tmpl.Labels, tmpl.Spec})
	}
	selecting := func(s labels.Selector) []podTemplate {
		var out []podTemplate
		for _, p := range pods {
			if s.Matches(p.labels) {
				out = append(out, p)
			}
		}
		return out
	}
	for _, o := range objs {
		var sel labels.Selector
		var err error
		switch v := o.Obj.(type) {
		case *corev1.Service:
			sel = labels.SelectorFromSet(v.Spec.Selector)
			matched := selecting(sel)
			if len(v.Spec.Selector) == 0 || len(matched) == 0 {
				errs = append(errs, fmt.Errorf("Service %s selects no pod", v.Name))
				continue
			}
			for _, port := range v.Spec.Ports {
				for _, p := range matched {
					if !hasPort(p.spec, port.TargetPort.String(), port.TargetPort.IntValue()) {
						errs = append(errs, fmt.Errorf("Service %s: port %s targets %s, which %s has not", v.Name, port.Name, port.TargetPort.String(), p.name))
					}
				}
			}
			continue
		case *policyv1.PodDisruptionBudget:
			sel, err = metav1.LabelSelectorAsSelector(v.Spec.Selector)
		case *networkingv1.NetworkPolicy:
			sel, err = metav1.LabelSelectorAsSelector(&v.Spec.PodSelector)
		case *serviceMonitor:
			// A ServiceMonitor selects Services.
			s, err := metav1.LabelSelectorAsSelector(&v.Spec.Selector)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			found := false
			for _, so := range objs {
				if svc, ok := so.Obj.(*corev1.Service); ok && s.Matches(labels.Set(svc.Labels)) {
					found = true
					for _, ep := range v.Spec.Endpoints {
						if !servicePort(svc, ep.Port) {
							errs = append(errs, fmt.Errorf("ServiceMonitor %s: Service %s has no port %s", v.Name, svc.Name, ep.Port))
						}
					}
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("ServiceMonitor %s selects no Service", v.Name))
			}
			continue
		default:
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sel.Empty() || len(selecting(sel)) == 0 {
			errs = append(errs, fmt.Errorf("%s %s selects no pod (%s)", o.Kind, o.Name, sel))
		}
	}
	return errs
}

func hasPort(spec corev1.PodSpec, name string, number int) bool {
	for _, c := range spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name || (number != 0 && int(p.ContainerPort) == number) {
				return true
			}
		}
	}
	return false
}

func servicePort(svc *corev1.Service, name string) bool {
	for _, p := range svc.Spec.Ports {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestSelectorCheckCatchesDrift: the selector check fails a Service that
// selects no pod, a Service port no pod has, and a NetworkPolicy that
// protects nothing.
func TestSelectorCheckCatchesDrift(t *testing.T) {
	out, err := render(t, umbrellaDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(objs []object){
		"service selector": func(objs []object) {
			find[*corev1.Service](t, objs, "Service", "mp-openfga").Spec.Selector["app.kubernetes.io/name"] = "open-fga"
		},
		"service target port": func(objs []object) {
			find[*corev1.Service](t, objs, "Service", "mp-rebac-authz-webhook").Spec.Ports[0].TargetPort = intstr.FromString("http")
		},
		"network policy": func(objs []object) {
			find[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy", "mp-openfga").Spec.PodSelector.MatchLabels["app.kubernetes.io/instance"] = "other"
		},
	} {
		t.Run(name, func(t *testing.T) {
			objs, err := decodeStrict(out)
			if err != nil {
				t.Fatal(err)
			}
			if errs := checkSelectors(objs); len(errs) > 0 {
				t.Fatalf("the rendered chart fails already: %v", errs)
			}
			mutate(objs)
			errs := checkSelectors(objs)
			if len(errs) == 0 {
				t.Fatal("passed the selector check")
			}
			t.Logf("caught: %v", errs[0])
		})
	}
}
