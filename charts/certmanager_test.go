package charts

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestCertManagerServingCertificate: with core.certManager.enabled each
// shard serves its cert-manager Certificate's Secret, mounted as a directory
// (subPath mounts never see a renewal) and named by --tls-cert-file; the
// Certificate covers the name the core hands out.
func TestCertManagerServingCertificate(t *testing.T) {
	out, err := render(t, umbrellaDir(t), "--set", "global.shards=2", "--set", "core.certManager.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeStrict(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, shard := range []string{"mp-core", "mp-core-b"} {
		sts := find[*appsv1.StatefulSet](t, objs, "StatefulSet", shard)
		spec := sts.Spec.Template.Spec
		c := spec.Containers[0]
		if !slices.Contains(c.Args, "--tls-cert-file=/etc/meshplane/serving/tls.crt") || !slices.Contains(c.Args, "--tls-private-key-file=/etc/meshplane/serving/tls.key") {
			t.Errorf("%s: no --tls-cert-file/--tls-private-key-file in %v", shard, c.Args)
		}
		var mounted bool
		for _, m := range c.VolumeMounts {
			if strings.HasSuffix(m.MountPath, "apiserver.crt") || strings.HasSuffix(m.MountPath, "apiserver.key") {
				t.Errorf("%s still mounts the install-time serving certificate at %s", shard, m.MountPath)
			}
			if m.MountPath == "/etc/meshplane/serving" {
				mounted = m.SubPath == ""
			}
		}
		if !mounted {
			t.Errorf("%s: the serving Secret is not mounted as a directory at /etc/meshplane/serving", shard)
		}
		for _, v := range spec.Volumes {
			if v.Name == "serving" && (v.Secret == nil || v.Secret.SecretName != shard+"-serving") {
				t.Errorf("%s: volume serving is not the Secret %s-serving", shard, shard)
			}
			if v.Name == "pki" && v.Secret != nil {
				for _, it := range v.Secret.Items {
					if strings.HasPrefix(it.Key, "serving-") {
						t.Errorf("%s: pki volume still carries %s", shard, it.Key)
					}
				}
			}
		}
		cert := find[*certificate](t, objs, "Certificate", shard+"-serving")
		if cert.Spec.SecretName != shard+"-serving" || cert.Spec.IssuerRef.Name != "mp-core-ca" {
			t.Errorf("Certificate %s: secret %q issuer %q", cert.Name, cert.Spec.SecretName, cert.Spec.IssuerRef.Name)
		}
		fqdn := shard + "." + sts.Namespace + ".svc.cluster.local"
		if !slices.Contains(cert.Spec.DNSNames, fqdn) {
			t.Errorf("Certificate %s does not cover %s: %v", cert.Name, fqdn, cert.Spec.DNSNames)
		}
	}
}
