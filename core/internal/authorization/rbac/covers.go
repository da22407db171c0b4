package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Covers reports whether ownerRules grant at least everything servantRules
// grant, using the same matching as RulesAllow. It is meant for escalation
// prevention: a user may create or update a Role or ClusterRole, or bind one,
// only if their own rules cover the role's rules.
//
// When the answer is false, the second result lists the uncovered
// permissions, each as a minimal rule (one verb and one API group and
// resource, plus one resource name when the servant rule had any; or one verb
// and one non-resource URL), without duplicates and in servant order.
//
// A servant rule is covered when every (verb, group, resource[, name]) and
// every (verb, URL) combination it grants is granted by a single owner rule.
// Combinations are not merged across owner rules; like kube-apiserver this
// can miss coverage that only several owner rules together provide, which
// errs on the side of refusing.
func Covers(ownerRules, servantRules []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var uncovered []rbacv1.PolicyRule
	seen := map[string]struct{}{}
	add := func(r rbacv1.PolicyRule) {
		key := strings.Join(r.Verbs, ",") + "|" + strings.Join(r.APIGroups, ",") + "|" +
			strings.Join(r.Resources, ",") + "|" + strings.Join(r.ResourceNames, ",") + "|" +
			strings.Join(r.NonResourceURLs, ",")
		if _, ok := seen[key]; ok {
			return
		}
		seen[key] = struct{}{}
		uncovered = append(uncovered, r)
	}

	for i := range servantRules {
		servant := &servantRules[i]
		// Fast path: a single owner rule covering the whole servant rule
		// avoids expanding it into its (possibly many) combinations.
		if anyCoversWhole(ownerRules, servant) {
			continue
		}
		forEachSimpleRule(servant, func(simple rbacv1.PolicyRule) {
			if !anyCoversSimple(ownerRules, &simple) {
				add(simple)
			}
		})
	}
	return len(uncovered) == 0, uncovered
}

func anyCoversWhole(owners []rbacv1.PolicyRule, servant *rbacv1.PolicyRule) bool {
	for i := range owners {
		if coversWhole(&owners[i], servant) {
			return true
		}
	}
	return false
}

func anyCoversSimple(owners []rbacv1.PolicyRule, simple *rbacv1.PolicyRule) bool {
	for i := range owners {
		if coversSimple(&owners[i], simple) {
			return true
		}
	}
	return false
}

// forEachSimpleRule calls fn for every minimal rule that servant grants.
func forEachSimpleRule(servant *rbacv1.PolicyRule, fn func(rbacv1.PolicyRule)) {
	for _, verb := range servant.Verbs {
		for _, group := range servant.APIGroups {
			for _, resource := range servant.Resources {
				base := rbacv1.PolicyRule{
					Verbs:     []string{verb},
					APIGroups: []string{group},
					Resources: []string{resource},
				}
				if len(servant.ResourceNames) == 0 {
					fn(base)
					continue
				}
				for _, name := range servant.ResourceNames {
					r := base
					r.ResourceNames = []string{name}
					fn(r)
				}
			}
		}
		for _, url := range servant.NonResourceURLs {
			fn(rbacv1.PolicyRule{Verbs: []string{verb}, NonResourceURLs: []string{url}})
		}
	}
}

// coversWhole is a conservative check that owner alone grants everything
// servant grants. It may answer false for a covered rule (the caller then
// checks combination by combination), never true for an uncovered one.
func coversWhole(owner, servant *rbacv1.PolicyRule) bool {
	if !coversAllValues(owner.Verbs, servant.Verbs) {
		return false
	}
	if len(servant.Resources) > 0 && len(servant.APIGroups) > 0 {
		if !coversAllValues(owner.APIGroups, servant.APIGroups) {
			return false
		}
		for _, r := range servant.Resources {
			if !coversResource(owner.Resources, r) {
				return false
			}
		}
		if !coversNames(owner.ResourceNames, servant.ResourceNames) {
			return false
		}
	}
	for _, u := range servant.NonResourceURLs {
		if !coversURL(owner.NonResourceURLs, u) {
			return false
		}
	}
	return true
}

// coversSimple reports whether owner grants the minimal rule simple.
func coversSimple(owner, simple *rbacv1.PolicyRule) bool {
	if !matchesValue(owner.Verbs, simple.Verbs[0]) {
		return false
	}
	if len(simple.NonResourceURLs) > 0 {
		return coversURL(owner.NonResourceURLs, simple.NonResourceURLs[0])
	}
	return matchesValue(owner.APIGroups, simple.APIGroups[0]) &&
		coversResource(owner.Resources, simple.Resources[0]) &&
		coversNames(owner.ResourceNames, simple.ResourceNames)
}

// coversAllValues reports whether owner (verbs or API groups) holds "*" or
// every servant entry. A servant "*" is covered only by an owner "*".
func coversAllValues(owner, servant []string) bool {
	for _, s := range servant {
		if !matchesValue(owner, s) {
			return false
		}
	}
	return true
}

// coversResource reports whether some owner resource pattern matches
// everything the servant resource pattern matches.
func coversResource(owner []string, servant string) bool {
	sRes, sSub, sHasSub := strings.Cut(servant, "/")
	for _, o := range owner {
		if o == wildcard || o == servant {
			return true
		}
		oRes, oSub, oHasSub := strings.Cut(o, "/")
		// A plain resource ("pods") covers only itself (handled above); a
		// subresource pattern never covers a plain resource or "*".
		if !oHasSub || !sHasSub {
			continue
		}
		if (oRes == wildcard || oRes == sRes) && oSub == sSub {
			return true
		}
	}
	return false
}

// coversNames: an owner without resourceNames covers any; otherwise the
// servant must be restricted to names the owner lists ("*" is a name like
// any other). A servant without resourceNames also grants unnamed requests
// such as list and create, which a name-restricted owner never does.
func coversNames(owner, servant []string) bool {
	if len(owner) == 0 {
		return true
	}
	if len(servant) == 0 {
		return false
	}
	for _, s := range servant {
		listed := false
		for _, o := range owner {
			listed = listed || o == s
		}
		if !listed {
			return false
		}
	}
	return true
}

// coversURL reports whether some owner URL pattern matches every path the
// servant URL pattern matches.
func coversURL(owner []string, servant string) bool {
	for _, o := range owner {
		if o == servant {
			return true
		}
		if strings.HasSuffix(o, wildcard) && strings.HasPrefix(servant, strings.TrimRight(o, wildcard)) {
			return true
		}
	}
	return false
}
