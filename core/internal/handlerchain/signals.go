package handlerchain

import (
	"context"
	"sync"
	"time"

	genericapiserver "k8s.io/apiserver/pkg/server"
)

// Signals holds the two moments of the server's life that the chain's
// filters read and genericapiserver.Config keeps to itself: when every
// route is installed (until then an unknown path answers 503, not 404)
// and when the server stops accepting requests (watches end then).
type Signals struct {
	muxAndDiscoveryComplete chan struct{}
	complete                sync.Once
	shuttingDown            <-chan struct{}
}

// NewSignals returns the signals of the server c configures. Shutting
// down begins ShutdownDelayDuration after shutdown is initiated: when
// kube's server stops accepting requests, for a server without
// pre-shutdown hooks (the core has none).
func NewSignals(c *genericapiserver.Config) *Signals {
	return &Signals{
		muxAndDiscoveryComplete: make(chan struct{}),
		shuttingDown:            delayed(c.ShutdownInitiatedNotify(), c.ShutdownDelayDuration),
	}
}

// ShuttingDown is closed when the server stops accepting requests
// (request.ServerShutdownSignal).
func (s *Signals) ShuttingDown() <-chan struct{} { return s.shuttingDown }

// CompleteMuxAndDiscovery marks the routes installed once every one of
// signals (GenericAPIServer.MuxAndDiscoveryCompleteSignals) is closed,
// unless ctx ends first, as the generic server does for its own chain
// when it starts to run. Call it once the APIs are installed.
func (s *Signals) CompleteMuxAndDiscovery(ctx context.Context, signals map[string]<-chan struct{}) {
	go func() {
		for _, signal := range signals {
			select {
			case <-signal:
			case <-ctx.Done():
				return
			}
		}
		s.complete.Do(func() { close(s.muxAndDiscoveryComplete) })
	}()
}

// delayed is closed d after signal is.
func delayed(signal <-chan struct{}, d time.Duration) <-chan struct{} {
	if d <= 0 {
		return signal
	}
	out := make(chan struct{})
	go func() {
		<-signal
		time.Sleep(d)
		close(out)
	}()
	return out
}
