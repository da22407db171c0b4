package dynamic

import (
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The CEL of a policy is compiled once per stored version of the policy
// (see policyCache), with apiserver's compilers and the environment of
// the apiserver's own compatibility version.

func baseEnv() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
}

func variables(vs []admissionregistrationv1.Variable) []plugincel.NamedExpressionAccessor {
	out := make([]plugincel.NamedExpressionAccessor, 0, len(vs))
	for _, v := range vs {
		out = append(out, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	return out
}

func matchConditions(c *plugincel.CompositedCompiler, conds []admissionregistrationv1.MatchCondition, opts plugincel.OptionalVariableDeclarations,
	failure *admissionregistrationv1.FailurePolicyType, kind, name string) matchconditions.Matcher {
	if len(conds) == 0 {
		return nil
	}
	exprs := make([]plugincel.ExpressionAccessor, len(conds))
	for i := range conds {
		exprs[i] = (*matchconditions.MatchCondition)(&conds[i])
	}
	return matchconditions.NewMatcher(c.CompileCondition(exprs, opts, environment.StoredExpressions), failure, "policy", kind, name)
}

// compileValidating compiles a ValidatingAdmissionPolicy; a compile error
// is kept in the validator and reported when the policy is invoked.
func compileValidating(p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	withParams := p.Spec.ParamKind != nil
	opts := plugincel.OptionalVariableDeclarations{HasParams: withParams, HasAuthorizer: true}
	messageOpts := plugincel.OptionalVariableDeclarations{HasParams: withParams}
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	c.CompileAndStoreVariables(variables(p.Spec.Variables), opts, environment.StoredExpressions)

	checks := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		checks[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	audit := make([]plugincel.ExpressionAccessor, len(p.Spec.AuditAnnotations))
	for i, a := range p.Spec.AuditAnnotations {
		audit[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		c.CompileCondition(checks, opts, environment.StoredExpressions),
		matchConditions(c, p.Spec.MatchConditions, opts, p.Spec.FailurePolicy, "validate", p.Name),
		c.CompileCondition(audit, opts, environment.StoredExpressions),
		c.CompileCondition(messages, messageOpts, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)
}

// compileMutating compiles a MutatingAdmissionPolicy into one patcher per
// mutation, in order.
func compileMutating(p *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return mutating.PolicyEvaluator{Error: fmt.Errorf("CEL compiler: %w", err)}
	}
	c.CompileAndStoreVariables(variables(p.Spec.Variables), opts, environment.StoredExpressions)
	patchOpts := opts
	patchOpts.HasPatchTypes = true
	var patchers []patch.Patcher
	for _, m := range p.Spec.Mutations {
		switch {
		case m.PatchType == admissionregistrationv1.PatchTypeJSONPatch && m.JSONPatch != nil:
			r := c.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOpts, environment.StoredExpressions)
			patchers = append(patchers, patch.NewJSONPatcher(r))
		case m.PatchType == admissionregistrationv1.PatchTypeApplyConfiguration && m.ApplyConfiguration != nil:
			r := c.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression}, patchOpts, environment.StoredExpressions)
			patchers = append(patchers, patch.NewApplyConfigurationPatcher(r))
		}
	}
	return mutating.PolicyEvaluator{
		Matcher:            matchConditions(c, p.Spec.MatchConditions, opts, p.Spec.FailurePolicy, "mutate", p.Name),
		Mutators:           patchers,
		CompositedCompiler: c,
	}
}
