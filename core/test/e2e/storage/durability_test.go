package storage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/meshplane/meshplane/sdk/testing/framework"
)

// TestDurabilityAcrossSIGKILL writes configmaps for a few seconds, kills the
// server with SIGKILL while writes are in flight, restarts it and checks
// that every create the server acknowledged is still there.
func TestDurabilityAcrossSIGKILL(t *testing.T) {
	s := framework.StartServer(t) // dedicated: this test kills its server
	cluster := framework.UniqueName("e2e-durable")
	const ns = "durable"
	base := fmt.Sprintf("/clusters/%s/api/v1/namespaces/%s/configmaps", cluster, ns)
	token := s.AdminToken(t)
	framework.RequireCode(t, s.AdminRequest(t, "POST", fmt.Sprintf("/clusters/%s/api/v1/namespaces", cluster), framework.NamespaceJSON(t, ns)), "creating the namespace", 201)

	client := s.HTTPClient(t)
	create := func(ctx context.Context, name, value string) bool {
		body, _ := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name},
			"data":     map[string]string{"value": value},
		})
		req, err := http.NewRequestWithContext(ctx, "POST", s.BaseURL+base, bytes.NewReader(body))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == http.StatusCreated
	}

	const writers = 4
	var (
		mu    sync.Mutex
		acked = map[string]string{} // name -> value
		tried int
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("cm-%d-%05d", w, i)
				value := fmt.Sprintf("writer %d item %d", w, i)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				ok := create(ctx, name, value)
				cancel()
				mu.Lock()
				tried++
				if ok {
					acked[name] = value
				}
				mu.Unlock()
			}
		}(w)
	}

	time.Sleep(3 * time.Second)
	// SIGKILL while the writers are still going: creates acknowledged before
	// the kill must survive, the others may or may not.
	if err := s.Kill(); err != nil {
		t.Fatalf("killing meshplane: %v", err)
	}
	close(stop)
	wg.Wait()
	client.CloseIdleConnections()
	mu.Lock()
	t.Logf("%d creates attempted, %d acknowledged before SIGKILL", tried, len(acked))
	mu.Unlock()
	if len(acked) < 10 {
		t.Fatalf("only %d configmap creates were acknowledged in 3s; too few to check durability", len(acked))
	}

	if err := s.Restart(); err != nil {
		t.Fatalf("restarting meshplane after SIGKILL: %v", err)
	}

	// Credentials may have been rewritten: read them again.
	r := s.AdminRequest(t, "GET", base, nil)
	framework.RequireCode(t, r, "listing configmaps after the restart", 200)
	var list corev1.ConfigMapList
	r.JSON(t, &list)
	stored := map[string]string{}
	for _, cm := range list.Items {
		stored[cm.Name] = cm.Data["value"]
	}
	var missing, wrong []string
	for name, value := range acked {
		got, ok := stored[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case got != value:
			wrong = append(wrong, fmt.Sprintf("%s=%q (want %q)", name, got, value))
		}
	}
	sort.Strings(missing)
	sort.Strings(wrong)
	if len(missing) > 0 || len(wrong) > 0 {
		t.Fatalf("after SIGKILL and restart, %d of %d acknowledged configmaps are missing %v and %d have wrong data %v",
			len(missing), len(acked), missing, len(wrong), wrong)
	}
	t.Logf("all %d acknowledged configmaps survived (%d stored in total)", len(acked), len(list.Items))

	// The restarted server keeps working.
	framework.RequireCode(t, s.AdminRequest(t, "POST", base, framework.ConfigMapJSON(t, "after-restart", map[string]string{"ok": "yes"})), "creating a configmap after the restart", 201)
	out := s.KubectlFor(cluster).Run(t, "get", "configmap", "after-restart", "-n", ns, "-o", "jsonpath={.data.ok}")
	framework.RequireEqual(t, out, "yes", "configmap created after the restart")
}
