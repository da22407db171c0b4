// Package kubecluster starts a real single-node Kubernetes cluster on this
// machine for tests: embedded etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet and kube-proxy (iptables mode) built from
// k8s.io/kubernetes by scripts/build-kubernetes.sh, containerd + runc + the
// CNI plugins from Debian's packages (scripts/install-test-deps.sh), CoreDNS
// for Service names, and a default StorageClass served by a hostPath
// provisioner of the kit's own.
//
// Everything lives under Options.Dir; listeners are on 127.0.0.1 or on the
// node address (the cluster's own bridge, NodeIP), never on the host's
// interfaces. Kube-proxy's iptables chains are host-wide, so one cluster runs
// on a machine at a time: Start waits for a host lock. Start needs root,
// cgroups, and the Debian packages; a missing prerequisite is a
// *PrerequisiteError (tests skip on it, saying which).
//
// Nothing is pulled: images come from OCI archives (Options.Images,
// Cluster.ImportImage; `make images` writes the project's), pods use
// imagePullPolicy Never or IfNotPresent, and the sandbox (pause) image,
// Options.SandboxImage, must be among the imported ones.
//
// docs/test-cluster.md describes what runs and what it costs.
package kubecluster
