package roleassignment

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	openfgav1 "github.com/openfga/api/proto/openfga/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1alpha1 "github.com/meshplane/meshplane/apis/core/v1alpha1"
	"github.com/meshplane/meshplane/apis/fga"
)

// roleStep checks that the role is one a user may hold directly on an
// account in the organization's current model: owner, member, or one a
// provider's model adds. Anything else (an IAM or verb relation, parent, a
// relation that does not exist) is refused with reason UnknownRole and
// revokes what an earlier spec granted.
type roleStep struct {
	model func(ctx context.Context, storeID string) (*openfgav1.AuthorizationModel, error)
	write func(ctx context.Context, storeID string, add, remove []corev1alpha1.Tuple) error
}

func (r *roleStep) reconcile(ctx context.Context, s *state) result {
	m, err := r.model(ctx, s.storeID)
	if err != nil || m == nil {
		setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonPending, fmt.Sprintf("reading the organization's model: %v", err))
		return wait(5 * time.Second)
	}
	roles := assignableRoles(m, s.ra.Spec.Subject.Kind == corev1alpha1.SubjectKindGroup)
	if roles[s.ra.Spec.Role] {
		return next
	}
	var names []string
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	setReady(s.ra, metav1.ConditionFalse, corev1alpha1.ReasonUnknownRole,
		fmt.Sprintf("role %q does not exist on accounts in this organization for a %s; roles: %s", s.ra.Spec.Role, s.ra.Spec.Subject.Kind, strings.Join(names, ", ")))
	if t := s.ra.Status.Tuple; t != nil && s.revocable(*t) {
		if err := r.write(ctx, s.storeID, nil, []corev1alpha1.Tuple{*t}); err != nil {
			return wait(5 * time.Second)
		}
	}
	s.ra.Status.Tuple = nil
	// Looked at again: a provider's model may add the role later.
	return wait(time.Minute)
}

// assignableRoles are the relations of the account type a user may hold
// directly (a [user] type restriction) or, for groups, a group's members
// (a [group#member] one).
func assignableRoles(m *openfgav1.AuthorizationModel, groups bool) map[string]bool {
	typ, relation := fga.UserType, ""
	if groups {
		typ, relation = fga.GroupType, fga.RelationMember
	}
	out := map[string]bool{}
	for _, td := range m.GetTypeDefinitions() {
		if td.GetType() != fga.AccountType {
			continue
		}
		for rel, md := range td.GetMetadata().GetRelations() {
			for _, ref := range md.GetDirectlyRelatedUserTypes() {
				if ref.GetType() == typ && ref.GetRelation() == relation && ref.GetWildcard() == nil && ref.GetCondition() == "" {
					out[rel] = true
				}
			}
		}
	}
	return out
}
