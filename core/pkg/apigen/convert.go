// Package apigen converts CustomResourceDefinitions into kcp
// APIResourceSchemas and APIExports.
package apigen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
)

// versionNamePattern is the version name format accepted by
// APIResourceSchema (stricter than what a CRD allows).
var versionNamePattern = regexp.MustCompile(`^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$`)

// ValidateCRD reports the first problem that prevents crd from being turned
// into an APIResourceSchema.
func ValidateCRD(crd *apiextensionsv1.CustomResourceDefinition) error {
	spec := &crd.Spec
	if spec.Group == "" {
		return fmt.Errorf("spec.group is empty")
	}
	if spec.Names.Plural == "" {
		return fmt.Errorf("spec.names.plural is empty")
	}
	if spec.Names.Kind == "" {
		return fmt.Errorf("spec.names.kind is empty")
	}
	switch spec.Scope {
	case apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped:
	default:
		return fmt.Errorf("spec.scope must be %q or %q, got %q", apiextensionsv1.NamespaceScoped, apiextensionsv1.ClusterScoped, spec.Scope)
	}
	if len(spec.Versions) == 0 {
		return fmt.Errorf("spec.versions is empty: a CRD needs at least one version")
	}
	seen := map[string]bool{}
	storage := 0
	for i, v := range spec.Versions {
		if v.Name == "" {
			return fmt.Errorf("spec.versions[%d].name is empty", i)
		}
		if !versionNamePattern.MatchString(v.Name) {
			return fmt.Errorf("spec.versions[%d].name %q is not a valid APIResourceSchema version (must match %s)", i, v.Name, versionNamePattern)
		}
		if seen[v.Name] {
			return fmt.Errorf("spec.versions[%d].name %q is duplicated", i, v.Name)
		}
		seen[v.Name] = true
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return fmt.Errorf("spec.versions[%d] (%s) has no schema.openAPIV3Schema", i, v.Name)
		}
		if v.Storage {
			storage++
		}
	}
	if storage != 1 {
		return fmt.Errorf("exactly one version must have storage: true, found %d", storage)
	}
	if c := spec.Conversion; c != nil {
		switch c.Strategy {
		case "", apiextensionsv1.NoneConverter:
		case apiextensionsv1.WebhookConverter:
			if c.Webhook == nil {
				return fmt.Errorf("spec.conversion.strategy is Webhook but spec.conversion.webhook is missing")
			}
			if cc := c.Webhook.ClientConfig; cc != nil && cc.Service != nil {
				return fmt.Errorf("spec.conversion.webhook.clientConfig.service is not supported by APIResourceSchema; use clientConfig.url")
			}
		default:
			return fmt.Errorf("spec.conversion.strategy %q is not supported (want None or Webhook)", c.Strategy)
		}
	}
	return nil
}

// ConvertCRD turns crd into an APIResourceSchema. The returned object has no
// name yet; see SchemaName. Problems that do not prevent the conversion (such
// as fields that APIResourceSchema cannot express) are reported through warnf
// if it is not nil.
func ConvertCRD(crd *apiextensionsv1.CustomResourceDefinition, warnf func(format string, args ...any)) (*apisv1alpha1.APIResourceSchema, error) {
	if err := ValidateCRD(crd); err != nil {
		return nil, err
	}
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	in := &crd.Spec
	out := &apisv1alpha1.APIResourceSchema{
		TypeMeta: metav1.TypeMeta{
			APIVersion: apisv1alpha1.SchemeGroupVersion.String(),
			Kind:       "APIResourceSchema",
		},
		Spec: apisv1alpha1.APIResourceSchemaSpec{
			Group: in.Group,
			Names: *in.Names.DeepCopy(),
			Scope: in.Scope,
		},
	}
	for _, v := range in.Versions {
		av := apisv1alpha1.APIResourceVersion{
			Name:       v.Name,
			Served:     v.Served,
			Storage:    v.Storage,
			Deprecated: v.Deprecated,
		}
		if v.DeprecationWarning != nil {
			w := *v.DeprecationWarning
			av.DeprecationWarning = &w
		}
		if err := av.SetSchema(v.Schema.OpenAPIV3Schema); err != nil {
			return nil, fmt.Errorf("version %s: encoding openAPIV3Schema: %w", v.Name, err)
		}
		if v.Subresources != nil {
			av.Subresources = *v.Subresources.DeepCopy()
		}
		for _, c := range v.AdditionalPrinterColumns {
			av.AdditionalPrinterColumns = append(av.AdditionalPrinterColumns, *c.DeepCopy())
		}
		if len(v.SelectableFields) > 0 {
			warnf("%s.%s version %s: selectableFields are not supported by APIResourceSchema and were dropped", in.Names.Plural, in.Group, v.Name)
		}
		out.Spec.Versions = append(out.Spec.Versions, av)
	}
	out.Spec.Conversion = convertConversion(in.Conversion)
	return out, nil
}

func convertConversion(in *apiextensionsv1.CustomResourceConversion) *apisv1alpha1.CustomResourceConversion {
	// An absent conversion defaults to None for CRDs; APIResourceSchema
	// requires it to be explicit when there are several versions.
	if in == nil || in.Strategy == "" || in.Strategy == apiextensionsv1.NoneConverter {
		return &apisv1alpha1.CustomResourceConversion{Strategy: apisv1alpha1.ConversionStrategyType(apiextensionsv1.NoneConverter)}
	}
	out := &apisv1alpha1.CustomResourceConversion{
		Strategy: apisv1alpha1.ConversionStrategyType(apiextensionsv1.WebhookConverter),
		Webhook: &apisv1alpha1.WebhookConversion{
			ConversionReviewVersions: append([]string(nil), in.Webhook.ConversionReviewVersions...),
		},
	}
	if cc := in.Webhook.ClientConfig; cc != nil {
		out.Webhook.ClientConfig = &apisv1alpha1.WebhookClientConfig{
			CABundle: append([]byte(nil), cc.CABundle...),
		}
		if cc.URL != nil {
			out.Webhook.ClientConfig.URL = *cc.URL
		}
		if len(out.Webhook.ClientConfig.CABundle) == 0 {
			out.Webhook.ClientConfig.CABundle = nil
		}
	}
	return out
}

// CanonicalJSON encodes v as JSON with object keys sorted at every level and
// no insignificant whitespace. Numbers are kept verbatim.
func CanonicalJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	// encoding/json sorts map keys.
	return json.Marshal(generic)
}

// SpecHash is the hex sha256 of the canonical JSON of spec.
func SpecHash(spec *apisv1alpha1.APIResourceSchemaSpec) (string, error) {
	raw, err := CanonicalJSON(spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// SchemaPrefix returns the name prefix "v<YYMMDD>-<first 8 hex chars of hash>"
// with the date taken from now in UTC.
func SchemaPrefix(now time.Time, hash string) string {
	if len(hash) > 8 {
		hash = hash[:8]
	}
	return "v" + now.UTC().Format("060102") + "-" + hash
}

// SchemaName returns "<prefix>.<plural>.<group>".
func SchemaName(prefix string, spec *apisv1alpha1.APIResourceSchemaSpec) string {
	return prefix + "." + spec.Names.Plural + "." + spec.Group
}
