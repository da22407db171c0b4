package manager

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// TestLogicalClusterPathSkipsRefusingHost: a host that refused the
// credential (401) is not asked again (the core closes an HTTP/2
// connection after an unauthenticated request); one that forbids a
// lookup (403: the workspace is still initializing) is asked every time,
// and the next host answers.
func TestLogicalClusterPathSkipsRefusingHost(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	serve := func(name string, code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			asked[name]++
			mu.Unlock()
			if code != http.StatusOK {
				http.Error(w, "no", code)
				return
			}
			cluster := strings.Split(strings.TrimPrefix(r.URL.Path, "/clusters/"), "/")[0]
			fmt.Fprintf(w, `{"metadata":{"annotations":{"kcp.io/path":"root:%s"}}}`, cluster)
		}))
	}
	refusing, forbidding, answering := serve("refusing", http.StatusUnauthorized), serve("forbidding", http.StatusForbidden), serve("answering", http.StatusOK)
	defer refusing.Close()
	defer forbidding.Close()
	defer answering.Close()

	resolve := LogicalClusterPath(&rest.Config{Host: refusing.URL}, &rest.Config{Host: forbidding.URL}, &rest.Config{Host: answering.URL})
	for _, cluster := range []string{"a", "b", "c"} {
		path, err := resolve(context.Background(), cluster)
		if err != nil || path != "root:"+cluster {
			t.Fatalf("resolve(%s) = %q, %v; want root:%s", cluster, path, err, cluster)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["refusing"] != 1 || asked["forbidding"] != 3 || asked["answering"] != 3 {
		t.Errorf("hosts asked %v; want the refusing one once, the others three times", asked)
	}
}
