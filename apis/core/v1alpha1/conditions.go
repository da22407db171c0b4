package v1alpha1

// Condition types. Ready summarises an object; the others report one
// reconcile step each, so that a user sees which step an object waits for.
const (
	// ConditionReady is True when every step of the object is done.
	ConditionReady = "Ready"

	// Account steps (account-operator), in calling order.

	// ConditionWorkspaceTypeReady: the organization's WorkspaceTypes
	// (<org>-org and <org>-account in root:orgs) exist and are ready.
	// Organizations only.
	ConditionWorkspaceTypeReady = "WorkspaceTypeReady"
	// ConditionWorkspaceCreated: the account's Workspace exists.
	ConditionWorkspaceCreated = "WorkspaceCreated"
	// ConditionAccountInfoReady: the AccountInfo "account" is written into
	// the account's workspace.
	ConditionAccountInfoReady = "AccountInfoReady"
	// ConditionWorkspaceReady: the account's workspace is Ready (its
	// initializers have finished).
	ConditionWorkspaceReady = "WorkspaceReady"

	// Store and AuthorizationModel steps (security-operator).

	// ConditionStoreCreated: the OpenFGA store exists; status.storeId is set.
	ConditionStoreCreated = "StoreCreated"
	// ConditionModelWritten: the authorization model, with the modules of
	// every AuthorizationModel referencing the store, is written.
	ConditionModelWritten = "ModelWritten"
	// ConditionTuplesWritten: spec.tuples are written and tuples removed from
	// the spec are deleted.
	ConditionTuplesWritten = "TuplesWritten"
)

// Condition reasons.
const (
	// ReasonReconciled: the step is done.
	ReasonReconciled = "Reconciled"
	// ReasonPending: the step waits for something outside the object (a
	// workspace, a WorkspaceType, a store) and will be retried.
	ReasonPending = "Pending"
	// ReasonError: the step failed; the condition's message says why.
	ReasonError = "Error"
	// ReasonDeleting: the object is being deleted and its finalizer cleans up.
	ReasonDeleting = "Deleting"
	// ReasonInUse: deletion waits because other objects still use this one
	// (Accounts in an AccountInfo's workspace, AuthorizationModels
	// referencing a Store).
	ReasonInUse = "InUse"
	// ReasonStoreNotFound: an AuthorizationModel references a Store that does
	// not exist or has no store ID yet.
	ReasonStoreNotFound = "StoreNotFound"
	// ReasonInvalidModel: the modelling-language text does not compile.
	ReasonInvalidModel = "InvalidModel"
	// ReasonOtherOrganization: an AuthorizationModel references the Store of
	// an organization other than the one it lives in; it is left out.
	ReasonOtherOrganization = "OtherOrganization"
	// ReasonNotOrganizationStore: a Store outside the workspace where the
	// platform keeps organizations' Stores (root:orgs); it gets no OpenFGA
	// store.
	ReasonNotOrganizationStore = "NotOrganizationStore"
	// ReasonUnknownRole: a RoleAssignment names a role the organization's
	// model does not let a user hold on an account; nothing is written.
	ReasonUnknownRole = "UnknownRole"
)

// Labels and finalizers shared by the operators.
const (
	// OrganizationLabelKey labels objects (e.g. WorkspaceTypes) with the
	// organization they were made for.
	OrganizationLabelKey = "core.platform-mesh.io/org"
	// OrgClusterAnnotationKey on a Store names the logical cluster of the
	// organization workspace it was made for (security-operator).
	OrgClusterAnnotationKey = "core.platform-mesh.io/org-cluster"
)
