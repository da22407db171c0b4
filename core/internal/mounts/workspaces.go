package mounts

import (
	"sync"

	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"

	"github.com/meshplane/meshplane/core/internal/clusters"
)

// Mounted is one mounted workspace: its parent cluster, name and ref.
type Mounted struct {
	Parent string
	Name   string
	Ref    tenancyv1alpha1.ObjectReference
}

// Object is the key of its mount object.
func (m Mounted) Object() ObjectKey { return KeyOf(m.Parent, m.Ref) }

type wsKey struct{ parent, name string }

// Workspaces indexes the mounted workspaces of every cluster, fed by a
// wildcard Workspace informer (Set): by parent and name for the proxy, by
// mount object for the controller.
type Workspaces struct {
	mu       sync.RWMutex
	byName   map[wsKey]Mounted
	byObject map[ObjectKey]map[wsKey]bool
	onChange []func(Mounted)
}

// NewWorkspaces returns an empty index.
func NewWorkspaces() *Workspaces {
	return &Workspaces{byName: map[wsKey]Mounted{}, byObject: map[ObjectKey]map[wsKey]bool{}}
}

// OnChange registers f, called after a mounted workspace comes or goes.
func (w *Workspaces) OnChange(f func(Mounted)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onChange = append(w.onChange, f)
}

// Set records a Workspace event (for wildcard.Mirror).
func (w *Workspaces) Set(obj any, deleted bool) {
	ws, ok := obj.(*tenancyv1alpha1.Workspace)
	if !ok {
		return
	}
	k := wsKey{parent: ws.Annotations[clusters.Annotation], name: ws.Name}
	w.mu.Lock()
	old, had := w.byName[k]
	if had {
		delete(w.byObject[old.Object()], k)
		if len(w.byObject[old.Object()]) == 0 {
			delete(w.byObject, old.Object())
		}
		delete(w.byName, k)
	}
	var m Mounted
	mounted := !deleted && ws.Spec.Mount != nil
	if mounted {
		m = Mounted{Parent: k.parent, Name: k.name, Ref: ws.Spec.Mount.Reference}
		w.byName[k] = m
		if w.byObject[m.Object()] == nil {
			w.byObject[m.Object()] = map[wsKey]bool{}
		}
		w.byObject[m.Object()][k] = true
	}
	listeners := w.onChange
	w.mu.Unlock()
	if had != mounted || (mounted && old != m) {
		if !mounted {
			m = old
		}
		for _, f := range listeners {
			f(m)
		}
	}
}

// Get returns the mounted workspace name in parent, if it is one.
func (w *Workspaces) Get(parent, name string) (Mounted, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	m, ok := w.byName[wsKey{parent, name}]
	return m, ok
}

// ByObject returns the workspaces that mount the object.
func (w *Workspaces) ByObject(k ObjectKey) []Mounted {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []Mounted
	for ws := range w.byObject[k] {
		out = append(out, w.byName[ws])
	}
	return out
}

// List returns every mounted workspace (of one cluster unless cluster is
// empty).
func (w *Workspaces) List(cluster string) []Mounted {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []Mounted
	for k, m := range w.byName {
		if cluster == "" || k.parent == cluster {
			out = append(out, m)
		}
	}
	return out
}
