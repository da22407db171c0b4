package sharding

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// WeightAnnotation on a Shard is its capacity relative to the others (a
// positive number, 1 when absent or invalid): new workspaces go where
// logical clusters per unit of weight are fewest.
const WeightAnnotation = "scheduling.meshplane.io/weight"

// TypeSelectorAnnotation on a WorkspaceType is a label selector (kubectl's
// syntax, "region=eu,tier!=small") the shard of each workspace of the
// type, or of a type extending it, must match, as well as the
// Workspace's own spec.location.selector.
const TypeSelectorAnnotation = "scheduling.meshplane.io/shard-selector"

// pickMemory is how long a pick is remembered: the same Workspace gets the
// same shard when its scheduling is retried, and picks count towards
// their shard's load until its replica shows the new logical clusters.
const pickMemory = 30 * time.Second

// Pick chooses the shard for a new workspace whose logical cluster is
// cluster: the shard already holding cluster (a retried scheduling),
// else among the shards matching the Workspace's spec.location.selector
// and typeSelector (each may be nil) and not annotated unschedulable, the
// one with the fewest logical clusters per unit of WeightAnnotation
// (counting this shard's recent picks); ties are broken by the
// Workspace's UID.
func (s *Shards) Pick(ctx context.Context, ws *tenancyv1alpha1.Workspace, cluster string, typeSelector labels.Selector) (corev1alpha1.Shard, error) {
	all, err := s.List(ctx)
	if err != nil {
		return corev1alpha1.Shard{}, fmt.Errorf("listing shards: %w", err)
	}
	if held, ok := s.holding(cluster); ok {
		for _, sh := range all {
			if sh.Name == held {
				return sh, nil
			}
		}
	}
	selector := labels.Everything()
	if ws.Spec.Location != nil && ws.Spec.Location.Selector != nil {
		if selector, err = metav1.LabelSelectorAsSelector(ws.Spec.Location.Selector); err != nil {
			return corev1alpha1.Shard{}, fmt.Errorf("spec.location.selector: %w", err)
		}
	}
	var candidates []corev1alpha1.Shard
	for _, sh := range all {
		set := labels.Set(sh.Labels)
		if sh.DeletionTimestamp == nil && sh.Annotations[UnschedulableAnnotation] == "" && selector.Matches(set) &&
			(typeSelector == nil || typeSelector.Matches(set)) {
			candidates = append(candidates, sh)
		}
	}
	if len(candidates) == 0 {
		sel := selector.String()
		if typeSelector != nil && !typeSelector.Empty() {
			sel += " (workspace type: " + typeSelector.String() + ")"
		}
		return corev1alpha1.Shard{}, &NoShardError{Selector: sel}
	}
	if name, ok := s.picks.of(string(ws.UID)); ok {
		for _, sh := range candidates {
			if sh.Name == name {
				return sh, nil
			}
		}
	}
	counts := s.counts()
	recent := s.picks.recent()
	slices.SortFunc(candidates, func(a, b corev1alpha1.Shard) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	best, least := []corev1alpha1.Shard(nil), math.Inf(1)
	for _, sh := range candidates {
		load := float64(counts[sh.Name]+recent[sh.Name]) / Weight(sh)
		switch {
		case load < least-1e-9:
			best, least = []corev1alpha1.Shard{sh}, load
		case load <= least+1e-9:
			best = append(best, sh)
		}
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(ws.UID))
	chosen := best[int(h.Sum32()%uint32(len(best)))]
	s.picks.add(string(ws.UID), chosen.Name)
	return chosen, nil
}

// Weight is a Shard's WeightAnnotation, 1 when absent or not a positive
// number.
func Weight(sh corev1alpha1.Shard) float64 {
	w, err := strconv.ParseFloat(sh.Annotations[WeightAnnotation], 64)
	if err != nil || w <= 0 || math.IsInf(w, 0) || math.IsNaN(w) {
		return 1
	}
	return w
}

// TypeSelector is the conjunction of the TypeSelectorAnnotation of the
// types given (a type and those it extends); nil when none has one.
func TypeSelector(types []*tenancyv1alpha1.WorkspaceType) (labels.Selector, error) {
	var sel labels.Selector
	for _, t := range types {
		v, ok := t.Annotations[TypeSelectorAnnotation]
		if !ok {
			continue
		}
		parsed, err := labels.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("annotation %s of WorkspaceType %s: %w", TypeSelectorAnnotation, t.Name, err)
		}
		if sel == nil {
			sel = labels.NewSelector()
		}
		reqs, _ := parsed.Requirements()
		sel = sel.Add(reqs...)
	}
	return sel, nil
}

// holding returns the shard that holds cluster already.
func (s *Shards) holding(cluster string) (string, bool) {
	if cluster == "" {
		return "", false
	}
	if s.Holds != nil && s.Holds(cluster) {
		return s.Self, true
	}
	return s.Others().ShardOf(cluster)
}

// counts are the logical clusters of every shard: this one's, and the
// others' replicas.
func (s *Shards) counts() map[string]int {
	out := s.Others().Count(LogicalClusters)
	if s.LocalCount != nil {
		out[s.Self] = s.LocalCount()
	}
	return out
}

// picks remembers recent picks by Workspace UID.
type picks struct {
	mu    sync.Mutex
	byUID map[string]pick
}

type pick struct {
	shard string
	at    time.Time
}

func (p *picks) add(uid, shard string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byUID == nil {
		p.byUID = map[string]pick{}
	}
	p.byUID[uid] = pick{shard: shard, at: time.Now()}
}

func (p *picks) of(uid string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pk, ok := p.byUID[uid]
	if !ok || time.Since(pk.at) > pickMemory {
		return "", false
	}
	return pk.shard, true
}

// recent counts the picks of the last pickMemory per shard and forgets
// older ones.
func (p *picks) recent() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for uid, pk := range p.byUID {
		if time.Since(pk.at) > pickMemory {
			delete(p.byUID, uid)
			continue
		}
		out[pk.shard]++
	}
	return out
}
