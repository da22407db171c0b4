package charts

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// runtimeSecretKeys are the keys of the Secrets the bootstrap writes at
// run time (not rendered): the credentials and the mongodb downstream.
var runtimeSecretKeys = map[string][]string{
	"-credential":                    {"kubeconfig", "token"},
	"-mongodb-downstream-kubeconfig": {"kubeconfig"},
}

// checkPaths: every absolute path a container's arguments name lies on one
// of its mounts, and a file of a Secret or ConfigMap volume is one of its
// keys (of the rendered object, or of the bootstrap's Secrets), so an
// argument and a mount cannot drift apart.
func checkPaths(objs []object) []error {
	secrets, configMaps := map[string][]string{}, map[string][]string{}
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *corev1.Secret:
			for k := range v.Data {
				secrets[v.Name] = append(secrets[v.Name], k)
			}
			for k := range v.StringData {
				secrets[v.Name] = append(secrets[v.Name], k)
			}
		case *corev1.ConfigMap:
			for k := range v.Data {
				configMaps[v.Name] = append(configMaps[v.Name], k)
			}
		}
	}
	keysOf := func(v corev1.Volume) ([]string, bool) {
		switch {
		case v.Secret != nil:
			if k, ok := secrets[v.Secret.SecretName]; ok {
				return k, true
			}
			for suffix, k := range runtimeSecretKeys {
				if strings.HasSuffix(v.Secret.SecretName, suffix) {
					return k, true
				}
			}
			return nil, false // a Secret the user provides: its keys are unknown
		case v.ConfigMap != nil:
			k, ok := configMaps[v.ConfigMap.Name]
			return k, ok
		}
		return nil, false
	}
	// A StatefulSet's claim templates are volumes of its pods too.
	claims := map[string][]string{}
	for _, o := range objs {
		if s, ok := o.Obj.(*appsv1.StatefulSet); ok {
			for _, c := range s.Spec.VolumeClaimTemplates {
				claims[o.Kind+"/"+o.Name] = append(claims[o.Kind+"/"+o.Name], c.Name)
			}
		}
	}
	var errs []error
	for name, spec := range podSpecs(objs) {
		volumes := map[string]corev1.Volume{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = v
		}
		for _, c := range claims[name] {
			volumes[c] = corev1.Volume{Name: c}
		}
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok {
					errs = append(errs, fmt.Errorf("%s/%s: mount %s of no volume", name, c.Name, m.Name))
				}
			}
			for _, p := range pathsIn(c) {
				if err := mounted(p, c.VolumeMounts, volumes, keysOf); err != nil {
					errs = append(errs, fmt.Errorf("%s/%s: %w", name, c.Name, err))
				}
			}
		}
	}
	return errs
}

// urlPathFlags take a URL's path, not a file.
var urlPathFlags = []string{"--authorization-webhook-rules-path", "--authorization-webhook-organizations-path"}

// pathsIn are the absolute file paths of a container's arguments
// (--flag=/path, /path, file:/path).
func pathsIn(c corev1.Container) []string {
	var out []string
	for _, a := range append(append([]string{}, c.Command...), c.Args...) {
		if i := strings.Index(a, "="); strings.HasPrefix(a, "-") && i > 0 {
			if slices.Contains(urlPathFlags, a[:i]) {
				continue
			}
			a = a[i+1:]
		}
		a = strings.TrimPrefix(a, "file:")
		if strings.HasPrefix(a, "/") {
			out = append(out, path.Clean(a))
		}
	}
	return out
}

// mounted checks that p lies on a mount (the deepest one) and, on a
// Secret or ConfigMap volume, names one of its files.
func mounted(p string, mounts []corev1.VolumeMount, volumes map[string]corev1.Volume, keysOf func(corev1.Volume) ([]string, bool)) error {
	var best *corev1.VolumeMount
	for i, m := range mounts {
		mp := path.Clean(m.MountPath)
		if (p == mp || strings.HasPrefix(p, mp+"/")) && (best == nil || len(mp) > len(path.Clean(best.MountPath))) {
			best = &mounts[i]
		}
	}
	if best == nil {
		return fmt.Errorf("%s is on no volume", p)
	}
	v := volumes[best.Name]
	rel := strings.TrimPrefix(strings.TrimPrefix(p, path.Clean(best.MountPath)), "/")
	if best.SubPath != "" {
		if rel != "" {
			return fmt.Errorf("%s lies under the file mount %s", p, best.MountPath)
		}
		rel = best.SubPath
	}
	if v.Secret == nil && v.ConfigMap == nil {
		return nil // a data volume: files appear at run time
	}
	if rel == "" {
		return nil // the volume's directory (--examples-dir)
	}
	var items []corev1.KeyToPath
	if v.Secret != nil {
		items = v.Secret.Items
	} else {
		items = v.ConfigMap.Items
	}
	if len(items) > 0 {
		for _, it := range items {
			if it.Path == rel {
				if keys, ok := keysOf(v); ok && !slices.Contains(keys, it.Key) {
					return fmt.Errorf("%s: volume %s maps key %s, which its object does not have", p, v.Name, it.Key)
				}
				return nil
			}
		}
		return fmt.Errorf("%s: volume %s has no item %s", p, v.Name, rel)
	}
	if keys, ok := keysOf(v); ok && !slices.Contains(keys, rel) {
		return fmt.Errorf("%s: volume %s has no key %s (has %v)", p, v.Name, rel, keys)
	}
	return nil
}

// TestPathCheckCatchesDrift: the path check fails an argument naming a
// file its volume does not hold, a key its Secret does not have, and a
// path on no volume.
func TestPathCheckCatchesDrift(t *testing.T) {
	out, err := render(t, umbrellaDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ object, from, to string }{
		{"Deployment/mp-rebac-authz-webhook", "--tls-cert-file=/etc/meshplane/tls/tls.crt", "--tls-cert-file=/etc/meshplane/tls/serving.crt"},
		{"StatefulSet/mp-core", "--authorization-webhook-config-file=/etc/meshplane/webhook/kubeconfig", "--authorization-webhook-config-file=/etc/meshplane/webhook/config"},
		{"Deployment/mp-account-operator", "--kubeconfig=/var/run/meshplane/credential/kubeconfig", "--kubeconfig=/etc/meshplane/admin/kubeconfig"},
	} {
		t.Run(tc.object, func(t *testing.T) {
			objs, err := decodeStrict(out)
			if err != nil {
				t.Fatal(err)
			}
			if errs := checkPaths(objs); len(errs) > 0 {
				t.Fatalf("the rendered chart fails already: %v", errs)
			}
			c := &podSpecs(objs)[tc.object].Containers[0]
			i := slices.Index(c.Args, tc.from)
			if i < 0 {
				t.Fatalf("%s has no argument %s", tc.object, tc.from)
			}
			c.Args[i] = tc.to
			errs := checkPaths(objs)
			if len(errs) == 0 {
				t.Fatalf("%s passed the path check", tc.to)
			}
			t.Logf("caught: %v", errs[0])
		})
	}
}
