package decision

import (
	"context"
	"sync"
	"time"

	"github.com/meshplane/meshplane/webhook/internal/metrics"
)

// Models knows each store's current authorization model. Checks name the
// model explicitly and cached decisions are keyed by it, so a new model
// invalidates them. A store's model is read on first use and again in the
// background when older than the refresh interval; callers never wait for
// a refresh.
type Models struct {
	fga     OpenFGA
	refresh time.Duration
	metrics *metrics.Metrics

	mu     sync.Mutex
	stores map[string]*model
}

type model struct {
	id         string
	read       time.Time
	refreshing bool
}

// NewModels returns an empty model tracker.
func NewModels(fga OpenFGA, refresh time.Duration, m *metrics.Metrics) *Models {
	return &Models{fga: fga, refresh: refresh, metrics: m, stores: map[string]*model{}}
}

// Current returns the store's current model id.
func (m *Models) Current(ctx context.Context, store string) (string, error) {
	m.mu.Lock()
	e, ok := m.stores[store]
	if ok {
		if time.Since(e.read) > m.refresh && !e.refreshing {
			e.refreshing = true
			go m.reread(store)
		}
		id := e.id
		m.mu.Unlock()
		return id, nil
	}
	m.mu.Unlock()
	id, err := m.read(ctx, store)
	if err != nil {
		return "", err
	}
	m.mu.Lock()
	m.stores[store] = &model{id: id, read: time.Now()}
	m.mu.Unlock()
	return id, nil
}

func (m *Models) read(ctx context.Context, store string) (string, error) {
	start := time.Now()
	id, err := m.fga.LatestModel(ctx, store)
	m.metrics.OpenFGASeconds.WithLabelValues("read_models").Observe(time.Since(start).Seconds())
	return id, err
}

func (m *Models) reread(store string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id, err := m.read(ctx, store)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.stores[store]
	if e == nil {
		return
	}
	e.refreshing = false
	if err != nil {
		// Forget it: the next use reads it again (and answers "no
		// opinion" while OpenFGA cannot say).
		delete(m.stores, store)
		return
	}
	e.id, e.read = id, time.Now()
}
