package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// wildcard is the value that matches everything in verbs, apiGroups,
// resources, resourceNames and nonResourceURLs.
const wildcard = "*"

// RulesAllow reports whether any of rules grants the request described by
// attrs. It looks only at the request (verb, API group, resource,
// subresource, name or path), never at the user or the namespace: callers
// decide which rules apply to whom and where.
//
// Resource requests match rules as follows:
//   - verbs and apiGroups: "*" or an exact entry;
//   - resources: "*" matches every resource and subresource, "pods" matches
//     only the pods resource itself, "pods/status" that one subresource and
//     "*/scale" the scale subresource of any resource (as kube-apiserver;
//     "pods/*" is not a wildcard);
//   - resourceNames: an empty list matches every request; a non-empty list
//     matches only requests that carry a name (get, update, ..., and list or
//     watch narrowed by a metadata.name field selector, whose name the request
//     attributes already carry) equal to an entry; as in kube-apiserver, "*"
//     there is a name like any other, not a wildcard.
//
// Non-resource requests match a rule whose verbs match and whose
// nonResourceURLs hold "*", the exact path, or a prefix of the path followed
// by a trailing "*".
func RulesAllow(attrs authorizer.Attributes, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if ruleAllows(attrs, &rules[i]) {
			return true
		}
	}
	return false
}

func ruleAllows(attrs authorizer.Attributes, rule *rbacv1.PolicyRule) bool {
	if !matchesValue(rule.Verbs, attrs.GetVerb()) {
		return false
	}
	if !attrs.IsResourceRequest() {
		return matchesURL(rule.NonResourceURLs, attrs.GetPath())
	}
	return matchesValue(rule.APIGroups, attrs.GetAPIGroup()) &&
		matchesResource(rule.Resources, attrs.GetResource(), attrs.GetSubresource()) &&
		matchesName(rule.ResourceNames, attrs.GetName())
}

// matchesValue reports whether values holds "*" or v.
func matchesValue(values []string, v string) bool {
	for _, x := range values {
		if x == wildcard || x == v {
			return true
		}
	}
	return false
}

// matchesResource reports whether one of the rule's resource entries matches
// the requested resource and subresource (empty when none).
func matchesResource(ruleResources []string, resource, subresource string) bool {
	for _, r := range ruleResources {
		if r == wildcard {
			return true
		}
		rr, rs, hasSub := strings.Cut(r, "/")
		if !hasSub {
			if subresource == "" && rr == resource {
				return true
			}
			continue
		}
		if subresource == "" {
			continue
		}
		if (rr == wildcard || rr == resource) && rs == subresource {
			return true
		}
	}
	return false
}

// matchesName implements resourceNames: empty means every request; otherwise
// the request must name an object listed.
func matchesName(ruleNames []string, name string) bool {
	if len(ruleNames) == 0 {
		return true
	}
	for _, n := range ruleNames {
		if n == name && name != "" {
			return true
		}
	}
	return false
}

// matchesURL implements nonResourceURLs: "*", exact, or trailing-"*" prefix.
func matchesURL(ruleURLs []string, path string) bool {
	for _, u := range ruleURLs {
		if u == wildcard || u == path {
			return true
		}
		if strings.HasSuffix(u, wildcard) && strings.HasPrefix(path, strings.TrimRight(u, wildcard)) {
			return true
		}
	}
	return false
}
