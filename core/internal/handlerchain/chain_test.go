package handlerchain

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	apirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericapiserver "k8s.io/apiserver/pkg/server"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/warning"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
}

// serve starts the chain around h over TLS and HTTP/2, with the given
// default request timeout, and returns its URL, client and signals.
func serve(t *testing.T, requestTimeout time.Duration, h http.HandlerFunc) (string, *http.Client, *Signals) {
	t.Helper()
	return serveWithShutdown(t, requestTimeout, nil, h)
}

// serveWithShutdown is serve with shutdown signalled by closing
// shuttingDown (when not nil).
func serveWithShutdown(t *testing.T, requestTimeout time.Duration, shuttingDown chan struct{}, h http.HandlerFunc) (string, *http.Client, *Signals) {
	t.Helper()
	return serveChain(t, requestTimeout, shuttingDown, Build, h)
}

// kubeChain is kube's own chain, for comparison.
func kubeChain(h http.Handler, c *genericapiserver.Config, _ *Signals) http.Handler {
	return genericapiserver.DefaultBuildHandlerChain(h, c)
}

func serveChain(t *testing.T, requestTimeout time.Duration, shuttingDown chan struct{},
	build func(http.Handler, *genericapiserver.Config, *Signals) http.Handler, h http.HandlerFunc) (string, *http.Client, *Signals) {
	t.Helper()
	c := genericapiserver.NewConfig(codecs)
	c.FeatureGate = utilfeature.DefaultFeatureGate
	c.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	c.RequestInfoResolver = genericapiserver.NewRequestInfoResolver(c)
	c.RequestTimeout = requestTimeout
	c.ShutdownWatchTerminationGracePeriod = time.Second
	s := NewSignals(c)
	if shuttingDown != nil {
		s.shuttingDown = shuttingDown
	}
	srv := httptest.NewUnstartedServer(build(h, c, s))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.URL, srv.Client(), s
}

func get(t *testing.T, client *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to GET %s: %v", url, err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("GET %s went over %s, want HTTP/2", url, resp.Proto)
	}
	return resp, body
}

// wantTimeout checks that the answer is kube's timeout filter's: 504 with
// a Timeout Status in JSON.
func wantTimeout(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d (%s), want 504", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var status metav1.Status
	if err := json.Unmarshal(body, &status); err != nil {
		t.Fatalf("body %q is not a Status: %v", body, err)
	}
	want := apierrors.NewTimeoutError(timeoutMessage, 0).ErrStatus
	if status.Reason != want.Reason || status.Code != want.Code || status.Message != want.Message {
		t.Fatalf("Status %+v, want reason %s, code %d, message %q", status, want.Reason, want.Code, want.Message)
	}
}

// answerError writes err as the endpoint handlers do.
func answerError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(apierrors.NewInternalError(err), codecs, schema.GroupVersion{Version: "v1"}, w, req)
}

func TestDeadlineFromTimeoutParameterAnswers504(t *testing.T) {
	var deadline time.Duration
	url, client, _ := serve(t, time.Minute, func(w http.ResponseWriter, req *http.Request) {
		d, ok := req.Context().Deadline()
		if !ok {
			t.Error("a list has no deadline in its context")
		}
		deadline = time.Until(d)
		// A storage call honouring the context: it fails when the
		// deadline passes, and the handler answers the error.
		<-req.Context().Done()
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		answerError(w, req, req.Context().Err())
	})
	start := time.Now()
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps?timeout=1s")
	wantTimeout(t, resp, body)
	if deadline > time.Second || deadline < 500*time.Millisecond {
		t.Errorf("the handler had %s left, want about the 1s asked for", deadline)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("answered after %s, want about 1s", took)
	}
}

func TestHandlerReturningSilentlyAfterDeadlineAnswers504(t *testing.T) {
	url, client, _ := serve(t, 300*time.Millisecond, func(w http.ResponseWriter, req *http.Request) {
		<-req.Context().Done()
	})
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps/a")
	wantTimeout(t, resp, body)
}

func TestFinishedInTimeAnswersAsWritten(t *testing.T) {
	url, client, _ := serve(t, time.Minute, func(w http.ResponseWriter, req *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the handler's writer is no http.Flusher")
		}
		warning.AddWarning(req.Context(), "", "careful")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "made")
	})
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps")
	if resp.StatusCode != http.StatusCreated || string(body) != "made" {
		t.Fatalf("answer %d %q, want 201 \"made\"", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Warning"); !strings.Contains(got, "careful") {
		t.Errorf("Warning header %q, want the handler's warning", got)
	}
}

func TestResponseBegunBeforeDeadlineIsFinished(t *testing.T) {
	url, client, _ := serve(t, 300*time.Millisecond, func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		<-req.Context().Done()
		_, _ = io.WriteString(w, "second")
	})
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps")
	if resp.StatusCode != http.StatusOK || string(body) != "first second" {
		t.Fatalf("answer %d %q, want 200 \"first second\"", resp.StatusCode, body)
	}
}

func TestPanicAnswers500(t *testing.T) {
	// As in kube's chain, the panic filter writes the 500 and then
	// panics again (utilruntime.ReallyCrash) for net/http to log, which
	// resets the HTTP/2 stream; without the second panic the 500 arrives.
	defer func(crash bool) { utilruntime.ReallyCrash = crash }(utilruntime.ReallyCrash)
	utilruntime.ReallyCrash = false
	url, client, _ := serve(t, time.Minute, func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Query().Get("panic") == "true" {
			panic("a handler bug")
		}
	})
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps?panic=true")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(body), "panic") {
		t.Fatalf("answer %d %q, want 500 with the panic filter's message", resp.StatusCode, body)
	}
	utilruntime.ReallyCrash = true
	if _, err := client.Get(url + "/api/v1/namespaces/default/configmaps?panic=true"); err == nil {
		t.Error("a panic with ReallyCrash set did not reset the stream")
	}
	if resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the panics: answer %d %q, want 200", resp.StatusCode, body)
	}
}

func TestWatchHasNoDeadlineAndEndsOnShutdown(t *testing.T) {
	shuttingDown := make(chan struct{})
	url, client, _ := serveWithShutdown(t, 200*time.Millisecond, shuttingDown, func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Context().Deadline(); ok {
			t.Error("a watch has a deadline")
		}
		signal := apirequest.ServerShutdownSignalFrom(req.Context())
		if signal == nil {
			t.Error("a watch has no shutdown signal")
			return
		}
		// Events for longer than the request timeout, then the end of
		// the watch when the server shuts down.
		for i := 0; i < 4; i++ {
			fmt.Fprintf(w, "event %d\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		select {
		case <-signal.ShuttingDown():
			fmt.Fprintln(w, "shutdown")
		case <-time.After(10 * time.Second):
		}
	})
	go func() {
		time.Sleep(600 * time.Millisecond)
		close(shuttingDown)
	}()
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps?watch=true")
	want := "event 0\nevent 1\nevent 2\nevent 3\nshutdown\n"
	if resp.StatusCode != http.StatusOK || string(body) != want {
		t.Fatalf("answer %d %q, want 200 %q", resp.StatusCode, body, want)
	}
}

func TestWarningsAfterDeadlineDoNotReachTheConnection(t *testing.T) {
	var late sync.WaitGroup
	url, client, _ := serve(t, 200*time.Millisecond, func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		late.Add(1)
		// Work that outlives the handler, as a finisher's goroutine does.
		go func() {
			defer late.Done()
			<-ctx.Done()
			for i := 0; i < 200; i++ {
				warning.AddWarning(ctx, "", fmt.Sprintf("late %d", i))
				time.Sleep(time.Millisecond)
			}
		}()
		<-ctx.Done()
		answerError(w, req, ctx.Err())
	})
	resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps/a")
	wantTimeout(t, resp, body)
	late.Wait()
}

func TestUnknownPathsAre503UntilRoutesAreInstalled(t *testing.T) {
	complete := make(chan bool, 2)
	url, client, s := serve(t, time.Minute, func(w http.ResponseWriter, req *http.Request) {
		complete <- genericapifilters.NoMuxAndDiscoveryIncompleteKey(req.Context())
	})
	get(t, client, url+"/apis/a/v1/b")
	if <-complete {
		t.Fatal("routes marked installed before CompleteMuxAndDiscovery")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	registered := make(chan struct{})
	s.CompleteMuxAndDiscovery(ctx, map[string]<-chan struct{}{"test": registered})
	close(registered)
	deadline := time.Now().Add(5 * time.Second)
	for {
		get(t, client, url+"/apis/a/v1/b")
		if <-complete {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("routes not marked installed after every registered signal closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSameAnswersAsKubesChain sends the same requests through kube's
// chain and the core's: status, Status reason and message, headers set by
// the filters, and the body of a watch agree.
func TestSameAnswersAsKubesChain(t *testing.T) {
	handler := func(w http.ResponseWriter, req *http.Request) {
		ctx := req.Context()
		switch req.URL.Query().Get("case") {
		case "slow":
			// Answering right at the deadline races with kube's timeout
			// filter (it resets the stream if the handler wrote first);
			// a little later its 504 is certain.
			<-ctx.Done()
			time.Sleep(50 * time.Millisecond)
			answerError(w, req, ctx.Err())
		case "watch":
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "event %d\n", i)
				w.(http.Flusher).Flush()
				time.Sleep(150 * time.Millisecond)
			}
		case "forbidden":
			responsewriters.ErrorNegotiated(apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "a", nil),
				codecs, schema.GroupVersion{Version: "v1"}, w, req)
		default:
			warning.AddWarning(ctx, "", "careful")
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "ok")
		}
	}
	type answer struct {
		code                  int
		reason                metav1.StatusReason
		message, body, header string
	}
	ask := func(build func(http.Handler, *genericapiserver.Config, *Signals) http.Handler, query string) answer {
		url, client, _ := serveChain(t, 300*time.Millisecond, nil, build, handler)
		resp, body := get(t, client, url+"/api/v1/namespaces/default/configmaps?"+query)
		a := answer{code: resp.StatusCode, header: resp.Header.Get("Cache-Control") + "|" + resp.Header.Get("Warning")}
		var status metav1.Status
		if json.Unmarshal(body, &status) == nil && status.Code != 0 {
			a.reason, a.message = status.Reason, status.Message
		} else {
			a.body = string(body)
		}
		return a
	}
	for _, query := range []string{"case=slow", "case=slow&timeout=100ms", "case=watch&watch=true", "case=forbidden", "", "timeout=bad"} {
		kube, core := ask(kubeChain, query), ask(Build, query)
		t.Logf("%q: %+v", query, core)
		if kube != core {
			t.Errorf("%q: kube's chain answers %+v, the core's %+v", query, kube, core)
		}
	}
}

// Over HTTP/1.1 a request with a deadline can still take over the
// connection (an upgrade proxied to a mount), as kube's chain allows.
func TestHijackBeforeDeadline(t *testing.T) {
	c := genericapiserver.NewConfig(codecs)
	c.FeatureGate = utilfeature.DefaultFeatureGate
	c.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	c.RequestInfoResolver = genericapiserver.NewRequestInfoResolver(c)
	srv := httptest.NewServer(Build(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, ok := req.Context().Deadline(); !ok {
			t.Error("the request has no deadline")
		}
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijacking: %v", err)
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		_ = rw.Flush()
	}), c, NewSignals(c)))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL + "/api/v1/namespaces/default/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "hijacked" {
		t.Fatalf("answer %d %q, want the hijacked connection's 200 \"hijacked\"", resp.StatusCode, body)
	}
}
