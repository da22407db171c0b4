package server

import (
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	basecompatibility "k8s.io/component-base/compatibility"
)

// GitVersion is what /version reports, as kcp reports <kube>+kcp-<version>:
// the Kubernetes API level served, then Meshplane.
const GitVersion = "v1.36.6+meshplane"

// effectiveVersion reports GitVersion instead of the unset build stamp,
// which kubectl cannot parse.
type effectiveVersion struct {
	basecompatibility.EffectiveVersion
}

func (v effectiveVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if info != nil {
		info.GitVersion = GitVersion
	}
	return info
}
