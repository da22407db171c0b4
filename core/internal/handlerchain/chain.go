// Package handlerchain builds the generic part of the core's HTTP handler
// chain from k8s.io/apiserver's public filters: the filters of
// genericapiserver.DefaultBuildHandlerChain, in its order and configured
// from the same Config, except that a request's deadline is not enforced
// by a goroutine per request (the timeout filter) but by the request's
// context, which storage, the registry's finisher and admission webhooks
// honour, and by withDeadlineStatus, which answers 504 for a request whose
// deadline passed before it answered (see deadline.go), and that with a
// no-op tracer provider the tracing and filter-latency filters do only
// what has an effect.
package handlerchain

import (
	"net/http"

	genericapifilters "k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/filters/impersonation"
	genericfeatures "k8s.io/apiserver/pkg/features"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/server/routine"
	flowcontrolrequest "k8s.io/apiserver/pkg/util/flowcontrol/request"
)

// Build wraps apiHandler in the generic filters, innermost first:
// authorization, priority and fairness or max-in-flight, impersonation,
// audit, tracing, authentication, CORS, the warning recorder, the deadline
// status, the request deadline, the in-flight wait group, watch
// termination on shutdown, GOAWAY, cache control, HSTS, retry-after on
// shutdown, HTTP logging, latency trackers, the stack growth (the core's
// own, see stack.go), the routine (feature gate), request info, the
// received timestamp, mux-and-discovery completion, panic recovery and
// audit init. Filters that depend on configuration are added under the
// same conditions as kube's chain. With a no-op tracer provider, tracing
// applies only to requests that carry a trace context (tracing.go) and
// the filter latencies are tracked without a request copy per filter
// (filterlatency.go). s gives the two server signals the Config keeps
// private.
func Build(apiHandler http.Handler, c *genericapiserver.Config, s *Signals) http.Handler {
	fl := filterLatency{tp: c.TracerProvider}
	h := fl.completed(apiHandler)
	h = genericapifilters.WithAuthorization(h, c.Authorization.Authorizer, c.Serializer)
	h = fl.started(h, "authorization")

	if c.FlowControl != nil {
		estimator := flowcontrolrequest.NewWorkEstimator(c.StorageObjectCountTracker.Get, c.FlowControl.GetInterestedWatchCount,
			flowcontrolrequest.DefaultWorkEstimatorConfig(), c.FlowControl.GetMaxSeats)
		h = fl.completed(h)
		h = genericfilters.WithPriorityAndFairness(h, c.LongRunningFunc, c.FlowControl, estimator, c.RequestTimeout/4)
		h = fl.started(h, "priorityandfairness")
	} else {
		h = genericfilters.WithMaxInFlightLimit(h, c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight, c.LongRunningFunc)
	}

	h = fl.completed(h)
	if c.FeatureGate.Enabled(genericfeatures.ConstrainedImpersonation) {
		h = impersonation.WithConstrainedImpersonation(h, c.Authorization.Authorizer, c.Serializer)
		h = fl.started(h, "constrainedimpersonation")
	} else {
		h = impersonation.WithImpersonation(h, c.Authorization.Authorizer, c.Serializer)
		h = fl.started(h, "impersonation")
	}

	h = fl.completed(h)
	h = genericapifilters.WithAudit(h, c.AuditBackend, c.AuditPolicyRuleEvaluator, c.LongRunningFunc)
	h = fl.started(h, "audit")

	unauthorized := genericapifilters.Unauthorized(c.Serializer)
	unauthorized = genericapifilters.WithFailedAuthenticationAudit(unauthorized, c.AuditBackend, c.AuditPolicyRuleEvaluator)
	if c.FeatureGate.Enabled(genericfeatures.APIServerTracing) {
		h = withTracing(h, c.TracerProvider)
	}
	unauthorized = fl.completed(unauthorized)
	h = fl.completed(h)
	h = genericapifilters.WithAuthentication(h, c.Authentication.Authenticator, unauthorized, c.Authentication.APIAudiences,
		c.Authentication.RequestHeaderConfig)
	h = fl.started(h, "authentication")

	h = genericfilters.WithCORS(h, c.CorsAllowedOriginList, nil, nil, nil, "true")
	// Inside withDeadlineStatus: warnings added by work that outlives
	// the deadline (a finisher's goroutine) go to a discarded header.
	h = genericapifilters.WithWarningRecorder(h)
	h = withDeadlineStatus(h)
	h = genericapifilters.WithRequestDeadline(h, c.AuditBackend, c.AuditPolicyRuleEvaluator, c.LongRunningFunc, c.Serializer, c.RequestTimeout)
	h = genericfilters.WithWaitGroup(h, c.LongRunningFunc, c.NonLongRunningRequestWaitGroup)
	if c.ShutdownWatchTerminationGracePeriod > 0 {
		h = genericfilters.WithWatchTerminationDuringShutdown(h, s, c.WatchRequestWaitGroup)
	}
	if c.SecureServing != nil && !c.SecureServing.DisableHTTP2 && c.GoawayChance > 0 {
		h = genericfilters.WithProbabilisticGoaway(h, c.GoawayChance)
	}
	h = genericapifilters.WithCacheControl(h)
	h = genericfilters.WithHSTS(h, c.HSTSDirectives)
	if c.ShutdownSendRetryAfter {
		h = genericfilters.WithRetryAfter(h, s.ShuttingDown())
	}
	h = genericfilters.WithHTTPLogging(h)
	h = genericapifilters.WithLatencyTrackers(h)
	h = withGrownStack(h, c.LongRunningFunc)
	if c.FeatureGate.Enabled(genericfeatures.APIServingWithRoutine) {
		h = routine.WithRoutine(h, c.LongRunningFunc)
	}
	h = genericapifilters.WithRequestInfo(h, c.RequestInfoResolver)
	h = genericapifilters.WithRequestReceivedTimestamp(h)
	h = genericapifilters.WithMuxAndDiscoveryComplete(h, s.muxAndDiscoveryComplete)
	h = genericfilters.WithPanicRecovery(h, c.RequestInfoResolver)
	return genericapifilters.WithAuditInit(h)
}
