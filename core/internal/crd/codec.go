package crd

import (
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/versioning"

	builtinapi "github.com/meshplane/meshplane/core/internal/apis/builtin"
)

// schemas are the structural schemas of one CRD, by version.
type schemas struct {
	byVersion        map[string]*structuralschema.Structural
	gk               schema.GroupKind
	preserveUnknowns bool
}

// coerce does to an unstructured custom resource what decoding into a Go
// struct does to a built-in one: it normalizes object metadata and, unless
// the CRD preserves unknown fields, prunes fields the schema does not
// know. It returns the paths of the pruned fields.
func (s schemas) coerce(u *unstructured.Unstructured, trackUnknown bool) ([]string, error) {
	kind, hasKind, _ := unstructured.NestedString(u.Object, "kind")
	apiVersion, hasAPIVersion, _ := unstructured.NestedString(u.Object, "apiVersion")
	objectMeta, hasMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: trackUnknown})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == s.gk.Group && kind == s.gk.Kind {
		structural := s.byVersion[gv.Version]
		if !s.preserveUnknowns && structural != nil {
			unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, structural, true,
				structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: trackUnknown})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, structural)
		}
		ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, structural, false,
			schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: trackUnknown})
		if ferr != nil {
			return nil, ferr
		}
		unknown = append(unknown, paths...)
	}
	if hasKind {
		u.SetKind(kind)
	}
	if hasAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if hasMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// coercingDecoder coerces what its delegate decodes; with strict decoding
// it reports pruned fields as strict decoding errors, which the handlers
// turn into field validation warnings or errors.
type coercingDecoder struct {
	delegate runtime.Decoder
	schemas  schemas
	strict   bool
}

func (d coercingDecoder) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var strictErrs []error
	obj, gvk, err := d.delegate.Decode(data, defaults, into)
	if err != nil {
		se, ok := runtime.AsStrictDecodingError(err)
		if !ok || obj == nil {
			return nil, gvk, err
		}
		strictErrs = se.Errors()
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		unknown, err := d.schemas.coerce(u, d.strict)
		if err != nil {
			return nil, gvk, err
		}
		for _, f := range unknown {
			strictErrs = append(strictErrs, fmt.Errorf("unknown field %q", f))
		}
	}
	if d.strict && len(strictErrs) > 0 {
		return obj, gvk, runtime.NewStrictDecodingError(strictErrs)
	}
	return obj, gvk, nil
}

// defaulter applies the structural schema's defaults to custom resources
// and the scheme's defaults to everything else (options, Scale).
type defaulter struct {
	schemas schemas
}

func (d defaulter) Default(in runtime.Object) {
	u, ok := in.(runtime.Unstructured)
	if !ok || u.GetObjectKind().GroupVersionKind().GroupKind() != d.schemas.gk {
		builtinapi.Scheme.Default(in)
		return
	}
	if s := d.schemas.byVersion[u.GetObjectKind().GroupVersionKind().Version]; s != nil {
		structuraldefaulting.Default(u.UnstructuredContent(), s)
	}
}

// creator makes unstructured objects of any kind.
type creator struct{}

func (creator) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// typer reports the kind of unstructured objects from their content and of
// typed ones from the parameter scheme.
type typer struct {
	delegate     runtime.ObjectTyper
	unstructured runtime.ObjectTyper
}

func newTyper(delegate runtime.ObjectTyper) typer {
	return typer{delegate: delegate, unstructured: crdserverscheme.NewUnstructuredObjectTyper()}
}

func (t typer) ObjectKinds(obj runtime.Object) ([]schema.GroupVersionKind, bool, error) {
	if _, ok := obj.(runtime.Unstructured); ok {
		return t.unstructured.ObjectKinds(obj)
	}
	return t.delegate.ObjectKinds(obj)
}

func (t typer) Recognizes(gvk schema.GroupVersionKind) bool {
	return t.delegate.Recognizes(gvk) || t.unstructured.Recognizes(gvk)
}

// negotiatedSerializer encodes and decodes custom resources for requests.
type negotiatedSerializer struct {
	typer     typer
	converter runtime.ObjectConvertor
	schemas   schemas
	media     []runtime.SerializerInfo
}

func newNegotiatedSerializer(t typer, converter runtime.ObjectConvertor, s schemas) negotiatedSerializer {
	c := creator{}
	plain := json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{})
	return negotiatedSerializer{typer: t, converter: converter, schemas: s, media: []runtime.SerializerInfo{
		{
			MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true,
			Serializer:       plain,
			PrettySerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Pretty: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Strict: true}),
			StreamSerializer: &runtime.StreamSerializerInfo{EncodesAsText: true, Serializer: plain, Framer: json.Framer},
		},
		{
			MediaType: "application/yaml", MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true,
			Serializer:       json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Yaml: true}),
			StrictSerializer: json.NewSerializerWithOptions(json.DefaultMetaFactory, c, t, json.SerializerOptions{Yaml: true, Strict: true}),
		},
	}}
}

func (s negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.media }

func (s negotiatedSerializer) EncoderForVersion(encoder runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return versioning.NewCodec(encoder, nil, unstructuredOnly{s.converter}, builtinapi.Scheme, builtinapi.Scheme, builtinapi.Scheme, gv, nil, "meshplane-cr-encoder")
}

// unstructuredOnly converts custom resources between versions and leaves
// typed envelopes (watch events, whose object is already encoded) as they
// are.
type unstructuredOnly struct {
	runtime.ObjectConvertor
}

func (u unstructuredOnly) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	if _, ok := in.(runtime.Unstructured); !ok {
		return in, nil
	}
	return u.ObjectConvertor.ConvertToVersion(in, gv)
}

func (s negotiatedSerializer) DecoderToVersion(decoder runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	strict := false
	if js, ok := decoder.(*json.Serializer); ok {
		strict = js.IsStrict()
	}
	d := coercingDecoder{delegate: decoder, schemas: s.schemas, strict: strict}
	return versioning.NewCodec(nil, d, runtime.UnsafeObjectConvertor(builtinapi.Scheme), builtinapi.Scheme, builtinapi.Scheme,
		defaulter{schemas: s.schemas}, nil, gv, "meshplane-cr-decoder")
}

// storageCodec stores custom resources as JSON in the storage version and
// reads them back, defaulted, in memoryVersion. Objects were pruned and
// their metadata coerced when written, so reads skip that (it was the
// larger part of a list's cost). What it reads is converted in place
// (unsafe: the object was just decoded and is nobody else's, where the
// safe converter deep-copied every object read) and its managedFields'
// field sets are shared with equal ones of other objects.
func storageCodec(safe, unsafe runtime.ObjectConvertor, s schemas, storageVersion, memoryVersion schema.GroupVersion) runtime.Codec {
	codec := func(converter runtime.ObjectConvertor) runtime.Codec {
		return versioning.NewCodec(unstructured.UnstructuredJSONScheme, unstructured.UnstructuredJSONScheme, converter, creator{},
			crdserverscheme.NewUnstructuredObjectTyper(), defaulter{schemas: s}, storageVersion, memoryVersion, "meshplane-cr-storage")
	}
	return runtime.NewCodec(codec(safe), sharingDecoder{Decoder: codec(unsafe), sets: sharedFieldSets})
}
