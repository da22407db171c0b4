package workspace

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
)

// fakeServer emulates the handful of kcp endpoints the plugin uses:
//
//	GET  /clusters/<parent>/apis/tenancy.kcp.io/v1alpha1/workspaces[/<name>]
//	POST /clusters/<parent>/apis/tenancy.kcp.io/v1alpha1/workspaces
//	GET  /clusters/root/apis/tenancy.kcp.io/v1alpha1/workspaces/~
//	GET  /clusters/<path>/apis/core.kcp.io/v1alpha1/logicalclusters/cluster
type fakeServer struct {
	t   *testing.T
	srv *httptest.Server

	mu sync.Mutex
	// workspaces by parent path and name
	workspaces map[string]map[string]*tenancyv1alpha1.Workspace
	// logical clusters that exist, by path
	clusters map[string]bool
	// paths the caller may not access (403 on everything addressed to them)
	forbidden map[string]bool
	// home is the path of the caller's home workspace
	home string
	// home429 is how many times the home endpoint answers 429 before succeeding (-1: forever)
	home429 int
	// homeRetryAfter is the Retry-After (seconds) of those 429s
	homeRetryAfter int
	// readyAfterGets: a created workspace becomes Ready after that many GETs
	readyAfterGets int
	pendingGets    map[string]int
	// deniedTypes: creating workspaces of these type names is forbidden
	deniedTypes map[string]bool
	// created records the bodies of successful POSTs
	created []*tenancyv1alpha1.Workspace
	// token is required as bearer token
	token string
}

func newFakeServer(t *testing.T) *fakeServer {
	f := &fakeServer{
		t:           t,
		workspaces:  map[string]map[string]*tenancyv1alpha1.Workspace{},
		clusters:    map[string]bool{"root": true},
		forbidden:   map[string]bool{},
		pendingGets: map[string]int{},
		deniedTypes: map[string]bool{},
		token:       "secret-token",

		homeRetryAfter: 1,
	}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// addWorkspace adds a Ready workspace (and its logical cluster) at path p.
func (f *fakeServer) addWorkspace(p, typ string, phase corev1alpha1.LogicalClusterPhaseType) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parent, _ := parentPath(p)
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: baseName(p)},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type:    parseTypeRef(typ),
			Cluster: strings.ReplaceAll(p, ":", "-"),
			URL:     f.srv.URL + "/clusters/" + p,
		},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: phase},
	}
	if f.workspaces[parent] == nil {
		f.workspaces[parent] = map[string]*tenancyv1alpha1.Workspace{}
	}
	f.workspaces[parent][ws.Name] = ws
	if phase == corev1alpha1.LogicalClusterPhaseReady {
		f.clusters[p] = true
	}
}

func (f *fakeServer) writeJSON(w http.ResponseWriter, code int, obj any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(obj); err != nil {
		f.t.Errorf("encoding response: %v", err)
	}
}

func (f *fakeServer) writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.Kind = "Status"
	st.APIVersion = "v1"
	f.writeJSON(w, int(st.Code), st)
}

var (
	wsGR = schema.GroupResource{Group: "tenancy.kcp.io", Resource: "workspaces"}
	lcGR = schema.GroupResource{Group: "core.kcp.io", Resource: "logicalclusters"}
)

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()

	if r.Header.Get("Authorization") != "Bearer "+f.token {
		f.writeStatus(w, apierrors.NewUnauthorized("no or wrong token"))
		return
	}
	// /clusters/<path>/apis/<group>/<version>/<resource>[/<name>]
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) < 6 || parts[0] != "clusters" || parts[2] != "apis" {
		http.NotFound(w, r)
		return
	}
	p, group, resource := parts[1], parts[3], parts[5]
	name := ""
	if len(parts) > 6 {
		name = parts[6]
	}

	switch {
	case group == "tenancy.kcp.io" && resource == "workspaces" && p == rootPath && name == "~" && r.Method == http.MethodGet:
		f.serveHome(w)
	case f.forbidden[p]:
		gr := wsGR
		if group == "core.kcp.io" {
			gr = lcGR
		}
		f.writeStatus(w, apierrors.NewForbidden(gr, name, fmt.Errorf("access denied to %s", p)))
	case group == "core.kcp.io" && resource == "logicalclusters" && name == "cluster" && r.Method == http.MethodGet:
		if !f.clusters[p] {
			f.writeStatus(w, apierrors.NewNotFound(lcGR, name))
			return
		}
		f.writeJSON(w, http.StatusOK, &corev1alpha1.LogicalCluster{
			TypeMeta:   metav1.TypeMeta{APIVersion: "core.kcp.io/v1alpha1", Kind: "LogicalCluster"},
			ObjectMeta: metav1.ObjectMeta{Name: "cluster", Annotations: map[string]string{"kcp.io/path": p}},
			Status:     corev1alpha1.LogicalClusterStatus{Phase: corev1alpha1.LogicalClusterPhaseReady},
		})
	case group == "tenancy.kcp.io" && resource == "workspaces" && name != "" && r.Method == http.MethodGet:
		ws, ok := f.workspaces[p][name]
		if !ok {
			f.writeStatus(w, apierrors.NewNotFound(wsGR, name))
			return
		}
		key := joinPath(p, name)
		if n, pending := f.pendingGets[key]; pending {
			if n <= 1 {
				delete(f.pendingGets, key)
				ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
				f.clusters[key] = true
			} else {
				f.pendingGets[key] = n - 1
				ws.Status.Phase = corev1alpha1.LogicalClusterPhaseInitializing
			}
		}
		f.writeJSON(w, http.StatusOK, withTypeMeta(ws))
	case group == "tenancy.kcp.io" && resource == "workspaces" && name == "" && r.Method == http.MethodGet:
		list := &tenancyv1alpha1.WorkspaceList{TypeMeta: metav1.TypeMeta{APIVersion: "tenancy.kcp.io/v1alpha1", Kind: "WorkspaceList"}}
		names := make([]string, 0, len(f.workspaces[p]))
		for n := range f.workspaces[p] {
			names = append(names, n)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(names))) // the plugin must sort itself
		for _, n := range names {
			list.Items = append(list.Items, *f.workspaces[p][n])
		}
		f.writeJSON(w, http.StatusOK, list)
	case group == "tenancy.kcp.io" && resource == "workspaces" && name == "" && r.Method == http.MethodPost:
		f.serveCreate(w, r, p)
	default:
		f.writeStatus(w, apierrors.NewMethodNotSupported(wsGR, r.Method))
	}
}

func (f *fakeServer) serveHome(w http.ResponseWriter) {
	if f.home429 != 0 {
		if f.home429 > 0 {
			f.home429--
		}
		w.Header().Set("Retry-After", fmt.Sprint(f.homeRetryAfter))
		f.writeStatus(w, apierrors.NewTooManyRequests("home workspace is being created", f.homeRetryAfter))
		return
	}
	if f.home == "" {
		f.writeStatus(w, apierrors.NewNotFound(wsGR, "~"))
		return
	}
	f.writeJSON(w, http.StatusOK, withTypeMeta(&tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: baseName(f.home)},
		Spec: tenancyv1alpha1.WorkspaceSpec{
			Type: &tenancyv1alpha1.WorkspaceTypeReference{Path: "root", Name: "home"},
			URL:  f.srv.URL + "/clusters/" + f.home,
		},
		Status: tenancyv1alpha1.WorkspaceStatus{Phase: corev1alpha1.LogicalClusterPhaseReady},
	}))
}

func (f *fakeServer) serveCreate(w http.ResponseWriter, r *http.Request, parent string) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		f.t.Errorf("create with Content-Type %q", ct)
	}
	ws := &tenancyv1alpha1.Workspace{}
	if err := json.NewDecoder(r.Body).Decode(ws); err != nil {
		f.writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if ws.APIVersion != "tenancy.kcp.io/v1alpha1" || ws.Kind != "Workspace" {
		f.writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("unexpected apiVersion/kind %q/%q", ws.APIVersion, ws.Kind)))
		return
	}
	if _, exists := f.workspaces[parent][ws.Name]; exists {
		f.writeStatus(w, apierrors.NewAlreadyExists(wsGR, ws.Name))
		return
	}
	if ws.Spec.Type != nil && f.deniedTypes[string(ws.Spec.Type.Name)] {
		f.writeStatus(w, apierrors.NewForbidden(wsGR, ws.Name, fmt.Errorf("unable to use workspace type %s: no permission to use it here", typeString(ws.Spec.Type))))
		return
	}
	f.created = append(f.created, ws.DeepCopy())

	// defaulting, as the server does
	if ws.Spec.Type == nil {
		ws.Spec.Type = &tenancyv1alpha1.WorkspaceTypeReference{Name: "universal"}
	}
	if ws.Spec.Type.Path == "" {
		ws.Spec.Type.Path = "root"
	}
	p := joinPath(parent, ws.Name)
	ws.Spec.URL = f.srv.URL + "/clusters/" + p
	ws.Spec.Cluster = strings.ReplaceAll(p, ":", "-")
	ws.Status.Phase = corev1alpha1.LogicalClusterPhaseScheduling
	if f.readyAfterGets > 0 {
		f.pendingGets[p] = f.readyAfterGets
	} else {
		ws.Status.Phase = corev1alpha1.LogicalClusterPhaseReady
		f.clusters[p] = true
	}
	if f.workspaces[parent] == nil {
		f.workspaces[parent] = map[string]*tenancyv1alpha1.Workspace{}
	}
	f.workspaces[parent][ws.Name] = ws
	f.writeJSON(w, http.StatusCreated, withTypeMeta(ws))
}

func withTypeMeta(ws *tenancyv1alpha1.Workspace) *tenancyv1alpha1.Workspace {
	ws = ws.DeepCopy()
	ws.APIVersion = "tenancy.kcp.io/v1alpha1"
	ws.Kind = "Workspace"
	return ws
}
