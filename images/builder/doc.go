// Package builder assembles Meshplane's container images from static binaries
// without a container daemon (go-containerregistry builds the image in
// memory) and writes each as an OCI image layout archive that
// `ctr images import` loads.
//
// An image is one or two layers on an empty base: a base layer shared by every
// server image (CA certificates, /etc/passwd and /etc/group with the nonroot
// user 65532, /etc/nsswitch.conf, /home/nonroot, /tmp) and a layer holding the
// binary at /usr/local/bin/<name>. Every timestamp is the build's creation
// time, so the same inputs give the same digests.
package builder
