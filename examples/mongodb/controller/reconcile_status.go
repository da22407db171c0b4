package controller

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	mongodbv1alpha1 "github.com/meshplane/meshplane/examples/mongodb/api/v1alpha1"
)

// statusFromDownstream step: the downstream operator's status (phase,
// currentMongoDBMembers, mongoUri, message) becomes the MongoDB's phase and
// connection details.
func (r *reconciler) statusFromDownstream(ctx context.Context, s *state) {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(DownstreamGVK)
	if err := r.downstreamReader.Get(ctx, client.ObjectKey{Namespace: r.namespace, Name: s.consumer.downstreamName()}, got); err != nil {
		log.FromContext(ctx).Info("reading downstream status", "err", err)
		return
	}
	phase, _, _ := unstructured.NestedString(got.Object, "status", "phase")
	members, _, _ := unstructured.NestedInt64(got.Object, "status", "currentMongoDBMembers")
	uri, _, _ := unstructured.NestedString(got.Object, "status", "mongoUri")
	want := int64(s.db.Spec.Members)
	if want == 0 {
		want = 3
	}
	switch {
	case phase == "Failed":
		s.db.Status.Phase = mongodbv1alpha1.PhaseFailed
	case phase == "Running" && members >= want:
		s.db.Status.Phase = mongodbv1alpha1.PhaseReady
		s.ready = true
	default:
		s.db.Status.Phase = mongodbv1alpha1.PhaseCreating
	}
	if host, port, ok := firstHost(uri); ok {
		s.db.Status.Connection = &mongodbv1alpha1.Connection{Host: host, Port: port, ReplicaSet: got.GetName(),
			SecretName: secretName(s.db.Name)}
	}
}

// firstHost is the first host:port of a mongodb:// URI
// ("mongodb://a:27017,b:27017/?replicaSet=x").
func firstHost(uri string) (string, int32, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "mongodb" || u.Host == "" {
		return "", 0, false
	}
	first, _, _ := strings.Cut(u.Host, ",")
	host, portStr, found := strings.Cut(first, ":")
	port := int64(27017)
	if found {
		if port, err = strconv.ParseInt(portStr, 10, 32); err != nil {
			return "", 0, false
		}
	}
	return host, int32(port), host != ""
}
