package apiexport

import (
	"sync"
	"weak"

	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
)

// decodedSchemas holds the decoded OpenAPI schema of each version of each
// APIResourceSchema, shared read-only by the CRDs of all its consumers.
// Decoding per binding kept a copy per consumer workspace (about 85 KiB per
// binding of core.platform-mesh.io's four resources).
var decodedSchemas = &schemaCache{entries: map[schemaVersion]decodedSchema{}}

type schemaVersion struct {
	uid     types.UID
	version string
}

// decodedSchema points weakly at the decoded schema: it lives as long as
// some consumer's CRD holds it, so schemas no binding uses any more are
// not kept.
type decodedSchema struct {
	resourceVersion string
	props           weak.Pointer[apiextensionsv1.JSONSchemaProps]
}

type schemaCache struct {
	mu      sync.Mutex
	entries map[schemaVersion]decodedSchema
}

// get returns v's schema, decoded once per resourceVersion while it is in
// use. The result is shared: callers must not modify it.
func (c *schemaCache) get(schema *apisv1alpha1.APIResourceSchema, v *apisv1alpha1.APIResourceVersion) (*apiextensionsv1.JSONSchemaProps, error) {
	key := schemaVersion{uid: schema.UID, version: v.Name}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.resourceVersion == schema.ResourceVersion {
		if props := e.props.Value(); props != nil {
			return props, nil
		}
	}
	props, err := v.GetSchema()
	if err != nil || props == nil {
		return props, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries { // drop what no CRD holds any more
		if e.props.Value() == nil {
			delete(c.entries, k)
		}
	}
	c.entries[key] = decodedSchema{resourceVersion: schema.ResourceVersion, props: weak.Make(props)}
	return props, nil
}

// sharedCRDs holds the CRD of each bound resource, one per schema
// resourceVersion and export identity, shared read-only by every binding
// that serves it. A CRD built per binding cost ~7 KB per APIBinding of
// core.platform-mesh.io (its metadata, versions, names and conditions).
var sharedCRDs = &crdCache{entries: map[crdKey]sharedCRD{}}

type crdKey struct {
	uid      types.UID
	identity string
}

// sharedCRD points weakly at the CRD: it lives as long as a binding serves
// it (or a caller holds it).
type sharedCRD struct {
	resourceVersion string
	crd             weak.Pointer[apiextensionsv1.CustomResourceDefinition]
}

type crdCache struct {
	mu      sync.Mutex
	entries map[crdKey]sharedCRD
	live    int // entries held at the last sweep
	builds  int // CRDs built, for tests
}

// get returns the CRD of schema under identity, built once per
// resourceVersion while it is in use.
func (c *crdCache) get(schema *apisv1alpha1.APIResourceSchema, identity string) (*apiextensionsv1.CustomResourceDefinition, error) {
	key := crdKey{uid: schema.UID, identity: identity}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.resourceVersion == schema.ResourceVersion {
		if crd := e.crd.Value(); crd != nil {
			return crd, nil
		}
	}
	crd, err := buildCRD(schema, identity)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.builds++
	if e, ok := c.entries[key]; ok && e.resourceVersion == schema.ResourceVersion {
		if shared := e.crd.Value(); shared != nil {
			return shared, nil // built meanwhile by another caller
		}
	}
	if len(c.entries) >= 2*c.live+64 { // drop what nothing holds any more
		c.live = 0
		for k, e := range c.entries {
			if e.crd.Value() == nil {
				delete(c.entries, k)
			} else {
				c.live++
			}
		}
	}
	c.entries[key] = sharedCRD{resourceVersion: schema.ResourceVersion, crd: weak.Make(crd)}
	return crd, nil
}
