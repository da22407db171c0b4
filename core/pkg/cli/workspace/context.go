package workspace

import (
	"fmt"
)

// createContextOptions implements "kubectl ws create-context".
type createContextOptions struct {
	*options
	overwrite bool
}

func (o *createContextOptions) run(name string) error {
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	_, p, err := parseClusterURL(cfg.Host)
	if err != nil {
		return fmt.Errorf("current URL %q does not point to a workspace", cfg.Host)
	}
	if name == "" {
		name = p
	}
	return createContextFor(o.options, name, cfg.Host, o.overwrite, false)
}

// createContextFor writes a context (and cluster) called name for server into
// the kubeconfig and, unless keepCurrent, makes it the current context.
func createContextFor(o *options, name, server string, overwrite, keepCurrent bool) error {
	st, err := o.kubeconfigState()
	if err != nil {
		return err
	}
	cfg, existed, err := createContext(st, name, server, overwrite, keepCurrent)
	if err != nil {
		return err
	}
	if err := o.writeKubeconfig(cfg); err != nil {
		return err
	}
	verb := "Created"
	if existed {
		verb = "Updated"
	}
	if keepCurrent || st.config.CurrentContext == name {
		_, err = fmt.Fprintf(o.out, "%s context %q.\n", verb, name)
	} else {
		_, err = fmt.Fprintf(o.out, "%s context %q and switched to it.\n", verb, name)
	}
	return err
}
