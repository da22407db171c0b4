package sharding

import (
	"sync"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// What the replicas of the other shards cost this shard, on /metrics:
// how many watches it keeps open on other shards and how many objects it
// holds (docs/sharding.md, replication that scales).
var (
	replicaWatchesDesc = metrics.NewDesc("meshplane_shard_replica_watches",
		"Watches this shard keeps open on other shards to replicate their objects (kinds times other shards).",
		nil, nil, metrics.ALPHA, "")
	replicaObjectsDesc = metrics.NewDesc("meshplane_shard_replica_objects",
		"Objects of other shards this shard holds in its replicas, by resource.",
		[]string{"resource"}, nil, metrics.ALPHA, "")

	registerOnce sync.Once
)

// replicaCollector reports the replicas of an Others.
type replicaCollector struct {
	metrics.BaseStableCollector
	o *Others
}

func (c *replicaCollector) DescribeWithStability(ch chan<- *metrics.Desc) {
	ch <- replicaWatchesDesc
	ch <- replicaObjectsDesc
}

func (c *replicaCollector) CollectWithStability(ch chan<- metrics.Metric) {
	watches, objects := c.o.cost()
	ch <- metrics.NewLazyConstMetric(replicaWatchesDesc, metrics.GaugeValue, float64(watches))
	for resource, n := range objects {
		ch <- metrics.NewLazyConstMetric(replicaObjectsDesc, metrics.GaugeValue, float64(n), resource)
	}
}

// registerMetrics reports o's replicas on /metrics (the first Others of
// the process: one per shard).
func registerMetrics(o *Others) {
	registerOnce.Do(func() { legacyregistry.CustomMustRegister(&replicaCollector{o: o}) })
}

// cost counts the replicas' watches and their objects by resource.
func (o *Others) cost() (watches int, objects map[string]int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	objects = map[string]int{}
	for _, kind := range replicated {
		objects[kind.GVR.Resource] = 0
	}
	for _, r := range o.running {
		for gvr, inf := range r.informers {
			watches++
			objects[gvr.Resource] += len(inf.GetStore().ListKeys())
		}
	}
	return watches, objects
}
