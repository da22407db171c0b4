package server

import (
	"context"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/tools/cache"

	resourcequotaadmission "github.com/meshplane/meshplane/core/internal/admission/resourcequota"
	"github.com/meshplane/meshplane/core/internal/controllers/resourcequota"
	"github.com/meshplane/meshplane/core/internal/registry/local"
	"github.com/meshplane/meshplane/core/internal/registry/wildcard"
)

// quotaParts are ResourceQuota admission and the quota controller's
// shared pieces: one wildcard informer on quotas and a counter.
type quotaParts struct {
	informer cache.SharedIndexInformer
	client   local.Client[*corev1.ResourceQuota]
	// controller is set by installResourceQuota; the garbage collector
	// feeds it object changes.
	controller *resourcequota.Controller
}

// newQuota builds the quota informer and the admission plugin.
func (p *parts) newQuota() (admission.Interface, error) {
	st, _ := p.storage[corev1.SchemeGroupVersion]["resourcequotas"].(local.Storage)
	status, _ := p.storage[corev1.SchemeGroupVersion]["resourcequotas/status"].(rest.Updater)
	q := &quotaParts{client: local.Client[*corev1.ResourceQuota]{Storage: st, Status: status},
		informer: wildcard.NewInformer(st, &corev1.ResourceQuota{})}
	if err := resourcequota.AddClusterIndex(q.informer); err != nil {
		return nil, err
	}
	p.quota = q
	return &resourcequotaadmission.Plugin{
		Handler:      admission.NewHandler(admission.Create),
		Quotas:       q.quotas,
		Get:          q.client.Get,
		UpdateStatus: q.updateStatus,
		Count:        p.countObjects,
	}, nil
}

// quotas lists the quotas of cluster: from the informer once it has
// synced, before (just after start) with a live list, so that no create
// slips past a quota.
func (q *quotaParts) quotas(ctx context.Context, cluster string) ([]*corev1.ResourceQuota, error) {
	if q.informer.HasSynced() {
		return resourcequota.QuotasOf(q.informer, cluster), nil
	}
	obj, err := q.client.List(ctx, cluster, "", nil)
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*corev1.ResourceQuotaList)
	if !ok {
		return nil, fmt.Errorf("unexpected list %T", obj)
	}
	out := make([]*corev1.ResourceQuota, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out, nil
}

func (q *quotaParts) updateStatus(ctx context.Context, cluster string, rq *corev1.ResourceQuota) error {
	_, err := q.client.UpdateStatus(ctx, cluster, rq.Namespace, rq.Name, rq)
	return err
}

func (p *parts) installResourceQuota(inf informers) controller {
	inf[reflect.TypeOf(&corev1.ResourceQuota{})] = p.quota.informer
	p.quota.controller = resourcequota.New(p.quota.informer, p.quota.client.Get, p.quota.updateStatus, p.countObjects)
	return p.quota.controller
}

// countObjects counts the objects of gr in cluster (namespace "" for the
// whole cluster) with a consistent list: built-in, custom or bound.
func (p *parts) countObjects(ctx context.Context, cluster, namespace string, gr schema.GroupResource) (int64, error) {
	var lister rest.Lister
	namespaced := false
	for gv, byPath := range p.storage {
		if gv.Group != gr.Group {
			continue
		}
		if st, ok := byPath[gr.Resource].(rest.Lister); ok {
			lister = st
			if s, ok := st.(rest.Scoper); ok {
				namespaced = s.NamespaceScoped()
			}
			break
		}
	}
	if lister == nil {
		for _, c := range p.crdIndex.List(cluster) {
			if c.Spec.Group != gr.Group || c.Spec.Names.Plural != gr.Resource {
				continue
			}
			reg, err := p.crdHandler.Registry(c)
			if err != nil {
				return 0, err
			}
			lister, namespaced = reg, c.Spec.Scope == apiextensionsv1.NamespaceScoped
			break
		}
	}
	if lister == nil || (!namespaced && namespace != "") {
		return 0, nil
	}
	if !namespaced {
		namespace = ""
	}
	list, err := lister.List(local.Context(ctx, cluster, namespace), &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	return int64(meta.LenList(list)), nil
}
