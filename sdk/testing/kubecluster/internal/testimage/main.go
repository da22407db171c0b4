// Command testimage is the one program of the kit's test images: a pause
// (the pod sandbox), an HTTP server, an HTTP client, and a file kept on a
// volume.
//
//	testimage pause                 sleep until SIGTERM
//	testimage serve <addr> <text>   answer every GET with text
//	testimage get <url>             GET url (retrying for a minute), print the
//	                                body and write it to /dev/termination-log;
//	                                HTTPS trusts the service account's CA
//	testimage keep <file>           print "found <content>" if file exists, else
//	                                write a random token to it and print
//	                                "wrote <token>"; then pause
package main

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fail("usage: testimage pause|serve|get|keep ...")
	}
	switch args := os.Args[2:]; os.Args[1] {
	case "pause":
		pause()
	case "serve":
		need(args, 2)
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, args[1]) })
		fail(http.ListenAndServe(args[0], nil))
	case "get":
		need(args, 1)
		get(args[0])
	case "keep":
		need(args, 1)
		keep(args[0])
		pause()
	default:
		fail("unknown command " + os.Args[1])
	}
}

func pause() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}

// serviceAccountCA is the cluster's CA, mounted into every pod with a
// service account token.
const serviceAccountCA = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

func get(url string) {
	client := &http.Client{Timeout: 5 * time.Second}
	if pem, err := os.ReadFile(serviceAccountCA); err == nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		resp, err := client.Get(url)
		if err != nil {
			last = err
			fmt.Fprintln(os.Stderr, "get:", err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("%s: %v", resp.Status, err)
			continue
		}
		fmt.Println(string(body))
		_ = os.WriteFile("/dev/termination-log", body, 0o644)
		return
	}
	_ = os.WriteFile("/dev/termination-log", []byte(last.Error()), 0o644)
	fail(last)
}

func keep(file string) {
	if b, err := os.ReadFile(file); err == nil {
		fmt.Println("found", string(b))
		return
	}
	token := make([]byte, 8)
	_, _ = rand.Read(token)
	s := hex.EncodeToString(token)
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		fail(err)
	}
	fmt.Println("wrote", s)
}

func need(args []string, n int) {
	if len(args) < n {
		fail(fmt.Sprintf("%s needs %d arguments", os.Args[1], n))
	}
}

func fail(v any) {
	fmt.Fprintln(os.Stderr, "testimage:", v)
	os.Exit(1)
}
