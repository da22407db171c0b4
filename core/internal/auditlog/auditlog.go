// Package auditlog writes the server's audit log: one JSON
// audit.k8s.io/v1 event per request at Metadata level (who did what to
// which object in which logical cluster), as kcp's --audit-log-path does
// with a catch-all policy.
package auditlog

import (
	"fmt"
	"os"
	"path/filepath"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	logbackend "k8s.io/apiserver/plugin/pkg/audit/log"
)

// New opens (appending) the log at path and returns the backend and the
// policy evaluator to put into the server config.
func New(path string) (audit.Backend, audit.PolicyRuleEvaluator, *os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening audit log: %w", err)
	}
	p := &auditinternal.Policy{
		OmitStages: []auditinternal.Stage{auditinternal.StageRequestReceived},
		Rules:      []auditinternal.PolicyRule{{Level: auditinternal.LevelMetadata}},
	}
	return logbackend.NewBackend(f, logbackend.FormatJson, auditv1.SchemeGroupVersion), policy.NewPolicyRuleEvaluator(p), f, nil
}
