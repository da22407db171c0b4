package crd

import (
	"fmt"
	"strings"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/scale"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// servingInfo is everything needed to serve one CRD's resources: a
// registry and request scopes per version.
type servingInfo struct {
	crd     *apiextensionsv1.CustomResourceDefinition
	storage map[string]customresource.CustomResourceStorage
	scopes  map[string]*handlers.RequestScope
	status  map[string]*handlers.RequestScope
	scale   map[string]*handlers.RequestScope
	// statusStorage serves the status subresource, by version.
	statusStorage map[string]subresource
}

// subresource is the storage of a status subresource.
type subresource interface {
	rest.Patcher
	GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set
}

// Builder makes serving infos.
type Builder struct {
	// Decorator builds storage (cluster partitioned) for custom resources.
	Decorator generic.StorageDecorator
	// CachedDecorator builds storage with a watch cache shared by all
	// clusters, used for bound resources: their objects live under the
	// export's identity and share one schema in every consumer.
	CachedDecorator generic.StorageDecorator
	// StaticOpenAPI holds the built-in definitions (ObjectMeta and friends)
	// for server-side apply's type converter.
	StaticOpenAPI map[string]*spec.Schema
	// StaticOpenAPIFrom, when set, is read in place of StaticOpenAPI each
	// time: the definitions exist only once the generic server installed
	// the apiextensions group.
	StaticOpenAPIFrom func() map[string]*spec.Schema
	Authorizer        authorizer.Authorizer
	Converters        ConverterFactory
	MaxBodyBytes      int64
}

// ConverterFactory makes converters between a CRD's versions.
type ConverterFactory interface {
	NewConverter(crd *apiextensionsv1.CustomResourceDefinition) (safe, unsafe runtime.ObjectConvertor, err error)
}

func (b *Builder) build(crd *apiextensionsv1.CustomResourceDefinition, storagePrefix string) (*servingInfo, error) {
	names := crd.Status.AcceptedNames
	if names.Plural == "" || names.Singular == "" || names.Kind == "" || names.ListKind == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %s has no accepted names yet", crd.Name)
	}
	storageVersion, err := apihelpers.GetCRDStorageVersion(crd)
	if err != nil {
		return nil, err
	}
	s := schemas{byVersion: map[string]*structuralschema.Structural{}, gk: schema.GroupKind{Group: crd.Spec.Group, Kind: names.Kind},
		preserveUnknowns: crd.Spec.PreserveUnknownFields}
	internalSchemas := map[string]*apiextensionsinternal.CustomResourceValidation{}
	for _, v := range crd.Spec.Versions {
		val, err := apihelpers.GetSchemaForVersion(crd, v.Name)
		if err != nil || val == nil {
			continue
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
			return nil, fmt.Errorf("converting schema of %s/%s: %w", crd.Name, v.Name, err)
		}
		internalSchemas[v.Name] = internal
		st, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			if crd.Spec.PreserveUnknownFields {
				continue
			}
			return nil, fmt.Errorf("schema of %s/%s is not structural: %w", crd.Name, v.Name, err)
		}
		if !crd.Spec.PreserveUnknownFields {
			st = st.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(st); err != nil {
				return nil, err
			}
		}
		s.byVersion[v.Name] = st
	}

	safe, unsafe, err := b.Converters.NewConverter(crd)
	if err != nil {
		return nil, err
	}
	typeConverter := b.typeConverter(crd)

	replicas := managedfields.ResourcePathMappings{}
	for _, v := range crd.Spec.Versions {
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}.String()
		sub, _ := apihelpers.GetSubresourcesForVersion(crd, v.Name)
		if sub == nil || sub.Scale == nil {
			replicas[gv] = nil
			continue
		}
		p := fieldpath.Path{}
		for _, el := range strings.Split(strings.TrimPrefix(sub.Scale.SpecReplicasPath, "."), ".") {
			e := el
			p = append(p, fieldpath.PathElement{FieldName: &e})
		}
		replicas[gv] = p
	}

	equivalents := runtime.NewEquivalentResourceRegistry()
	info := &servingInfo{crd: crd, storage: map[string]customresource.CustomResourceStorage{},
		scopes: map[string]*handlers.RequestScope{}, status: map[string]*handlers.RequestScope{}, scale: map[string]*handlers.RequestScope{},
		statusStorage: map[string]subresource{}}
	for _, v := range crd.Spec.Versions {
		if !v.Served && !v.Storage {
			continue
		}
		gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: names.Plural}
		kind := gvr.GroupVersion().WithKind(names.Kind)
		equivalents.RegisterKindFor(gvr, "", kind)

		params := runtime.NewScheme()
		params.AddUnversionedTypes(gvr.GroupVersion(), &metav1.ListOptions{}, &metav1.GetOptions{}, &metav1.DeleteOptions{})
		t := newTyper(params)

		var internalProps *apiextensionsinternal.JSONSchemaProps
		if is := internalSchemas[v.Name]; is != nil {
			internalProps = is.OpenAPIV3Schema
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internalProps)
		if err != nil {
			return nil, err
		}
		sub, _ := apihelpers.GetSubresourcesForVersion(crd, v.Name)
		var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
		var statusValidator apiservervalidation.SchemaValidator
		if sub != nil && sub.Status != nil {
			equivalents.RegisterKindFor(gvr, "status", kind)
			statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
			if internalProps != nil {
				if st, ok := internalProps.Properties["status"]; ok {
					if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
						return nil, err
					}
				}
			}
		}
		var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
		if sub != nil && sub.Scale != nil {
			equivalents.RegisterKindFor(gvr, "scale", autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
			scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(sub.Scale, scaleSpec, nil); err != nil {
				return nil, err
			}
		}
		table, err := tableconvertor.New(columnsFor(v))
		if err != nil {
			table, _ = tableconvertor.New(nil)
		}
		opts := &crOptions{
			decorator: b.decoratorFor(crd), prefix: storagePrefix,
			codec: storageCodec(safe, unsafe, s, schema.GroupVersion{Group: crd.Spec.Group, Version: storageVersion}, gvr.GroupVersion()),
		}
		strategy := customresource.NewStrategy(t, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind, validator, statusValidator,
			s.byVersion[v.Name], statusSpec, scaleSpec, v.SelectableFields)
		st, err := customresource.NewStorage(gvr.GroupResource(), schema.GroupResource{Group: crd.Spec.Group, Resource: names.Singular},
			kind, gvr.GroupVersion().WithKind(names.ListKind), strategy, opts, names.Categories, table, replicas)
		if err != nil {
			return nil, err
		}
		info.storage[v.Name] = st
		var statusStorage subresource
		if st.Status != nil {
			statusStorage = st.Status
		}
		if crd.Spec.Group == "" {
			checks := coreGroupChecks{namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, schema: validator, status: statusValidator}
			if sr := coreGroupStorage(st, customresource.NewStatusStrategy(strategy), checks); sr != nil {
				statusStorage = sr
			}
		}
		if statusStorage != nil {
			info.statusStorage[v.Name] = statusStorage
		}
		if err := waitReady(st.CustomResource.ReadinessCheckFunc); err != nil {
			return nil, fmt.Errorf("storage of %s/%s: %w", crd.Name, v.Name, err)
		}

		serializer := newNegotiatedSerializer(t, safe, s)
		scope := handlers.RequestScope{
			Namer:                    handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: crd.Spec.Scope == apiextensionsv1.ClusterScoped},
			Serializer:               serializer,
			ParameterCodec:           runtime.NewParameterCodec(params),
			StandardSerializers:      serializer.media,
			Creater:                  creator{},
			Convertor:                safe,
			Defaulter:                defaulter{schemas: s},
			Typer:                    t,
			UnsafeConvertor:          unsafe,
			EquivalentResourceMapper: equivalents,
			Resource:                 gvr,
			Kind:                     kind,
			HubGroupVersion:          kind.GroupVersion(),
			MetaGroupVersion:         metav1.SchemeGroupVersion,
			TableConvertor:           st.CustomResource,
			Authorizer:               b.Authorizer,
			MaxRequestBodyBytes:      b.MaxBodyBytes,
		}
		main, err := withFieldManager(typeConverter, scope, st.CustomResource.GetResetFields(), "")
		if err != nil {
			return nil, err
		}
		info.scopes[v.Name] = &main

		status := main
		status.Subresource = "status"
		if statusStorage != nil {
			if status, err = withFieldManager(typeConverter, status, statusStorage.GetResetFields(), "status"); err != nil {
				return nil, err
			}
		}
		info.status[v.Name] = &status

		if st.Scale != nil {
			scale := main
			scale.Subresource = "scale"
			scale.Kind = autoscalingv1.SchemeGroupVersion.WithKind("Scale")
			scale.Serializer = scaleCodecs
			scale.TableConvertor, _ = tableconvertor.New(nil)
			if scale, err = withFieldManager(typeConverter, scale, nil, "scale"); err != nil {
				return nil, err
			}
			info.scale[v.Name] = &scale
		}
	}
	return info, nil
}

func (b *Builder) decoratorFor(crd *apiextensionsv1.CustomResourceDefinition) generic.StorageDecorator {
	if crd.Annotations[IdentityAnnotation] != "" && b.CachedDecorator != nil {
		return b.CachedDecorator
	}
	return b.Decorator
}

func columnsFor(v apiextensionsv1.CustomResourceDefinitionVersion) []apiextensionsv1.CustomResourceColumnDefinition {
	if len(v.AdditionalPrinterColumns) > 0 {
		return v.AdditionalPrinterColumns
	}
	return []apiextensionsv1.CustomResourceColumnDefinition{{
		Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp",
		Description: "CreationTimestamp is a timestamp representing the server time when this object was created.",
	}}
}

func withFieldManager(tc managedfields.TypeConverter, scope handlers.RequestScope, reset map[fieldpath.APIVersion]*fieldpath.Set, subresource string) (handlers.RequestScope, error) {
	fm, err := managedfields.NewDefaultCRDFieldManager(tc, scope.Convertor, scope.Defaulter, scope.Creater, scope.Kind,
		scope.HubGroupVersion, subresource, fieldpath.NewExcludeFilterSetMap(reset))
	if err != nil {
		return handlers.RequestScope{}, err
	}
	scope.FieldManager = fm
	return scope, nil
}

// typeConverter builds server-side apply's view of the CRD's schemas; it
// falls back to deducing types from objects when the schemas cannot be
// turned into models.
func (b *Builder) typeConverter(crd *apiextensionsv1.CustomResourceDefinition) managedfields.TypeConverter {
	specs := []*spec3.OpenAPI{{Version: "3.0.0", Info: &spec.Info{InfoProps: spec.InfoProps{Title: "static", Version: "v1"}},
		Components: &spec3.Components{Schemas: b.staticOpenAPI()}}}
	for _, v := range crd.Spec.Versions {
		s, err := builder.BuildOpenAPIV3(crd, v.Name, builder.Options{})
		if err != nil {
			return managedfields.NewDeducedTypeConverter()
		}
		specs = append(specs, s)
	}
	merged, err := builder.MergeSpecsV3(specs...)
	if err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	tc, err := managedfields.NewTypeConverter(merged.Components.Schemas, crd.Spec.PreserveUnknownFields)
	if err != nil {
		return managedfields.NewDeducedTypeConverter()
	}
	return tc
}

// scaleCodecs encode the Scale subresource.
var scaleCodecs = serializer.NewCodecFactory(scale.NewScaleConverter().Scheme())

// crOptions hands the custom resource registry storage with its own codec
// and prefix.
type crOptions struct {
	decorator generic.StorageDecorator
	prefix    string
	codec     runtime.Codec
}

func (o *crOptions) GetRESTOptions(gr schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig: &storagebackend.ConfigForResource{
			Config:        storagebackend.Config{Codec: o.codec},
			GroupResource: gr,
		},
		Decorator:               o.decorator,
		DeleteCollectionWorkers: 1,
		// Deletes honour propagationPolicy (the foregroundDeletion and
		// orphan finalizers); the garbage collector acts on them.
		EnableGarbageCollection: true,
		ResourcePrefix:          o.prefix,
	}, nil
}

// waitReady waits (briefly) until a new registry's watch cache has loaded,
// so the first requests are not refused while it initializes.
func waitReady(check func() error) error {
	if check == nil {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := check()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *Builder) staticOpenAPI() map[string]*spec.Schema {
	if b.StaticOpenAPIFrom != nil {
		return b.StaticOpenAPIFrom()
	}
	return b.StaticOpenAPI
}
