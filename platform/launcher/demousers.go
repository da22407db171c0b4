package launcher

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// demoUsersFile holds the static tokens of the local demo users, created
// once and kept, so a restart keeps their kubeconfig contexts valid.
const demoUsersFile = "demo-users.csv"

// DemoUsers are the users a local run creates. They are in no group but
// system:authenticated, so they get exactly what the platform grants any
// user.
var DemoUsers = []string{"alice", "bob"}

// DemoContextPath is the workspace the demo users' contexts point at.
const DemoContextPath = "root:orgs"

// ensureDemoUsers writes the token file unless it exists already.
func ensureDemoUsers(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	for _, name := range DemoUsers {
		token := make([]byte, 24)
		if _, err := rand.Read(token); err != nil {
			f.Close()
			return err
		}
		if err := w.Write([]string{hex.EncodeToString(token), name, "demo-" + name}); err != nil {
			f.Close()
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readDemoTokens maps demo user names to their tokens.
func readDemoTokens(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tokens := map[string]string{}
	for _, rec := range recs {
		if len(rec) >= 2 {
			tokens[rec[1]] = rec[0]
		}
	}
	return tokens, nil
}

// addDemoContexts adds a user and a context per demo user to the admin
// kubeconfig (the core rewrites the file on every start, so this runs on
// every start too), pointing at the organizations workspace.
func addDemoContexts(kubeconfig, coreURL, usersFile string) error {
	tokens, err := readDemoTokens(usersFile)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return err
	}
	base, ok := cfg.Clusters["base"]
	if !ok {
		return fmt.Errorf("%s has no cluster %q", kubeconfig, "base")
	}
	orgs := base.DeepCopy()
	orgs.Server = coreURL + "/clusters/" + DemoContextPath
	cfg.Clusters[DemoContextPath] = orgs
	for _, name := range DemoUsers {
		token, ok := tokens[name]
		if !ok {
			return fmt.Errorf("%s has no token for %s", usersFile, name)
		}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: DemoContextPath, AuthInfo: name}
	}
	return clientcmd.WriteToFile(*cfg, kubeconfig)
}
