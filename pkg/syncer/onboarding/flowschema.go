package onboarding

import (
	"context"
	"slices"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/syncer/controller"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Where the tenants' own requests to the host go in API Priority and
// Fairness (artifacts/deploy ships the level).
const (
	// TenantsPriorityLevel is the priority level every tenant's FlowSchema
	// names: one flow per tenant.
	TenantsPriorityLevel = "tenant-workloads"
	// FlowSchemaPrecedence comes after the host's own schemas and the
	// tenant.io API's (tenant-io, 8000), and before service-accounts (9000)
	// and global-default (9900), where a tenant's users and service
	// accounts would otherwise fall, each a flow of its own.
	FlowSchemaPrecedence = 8500
)

// FlowSchemaName is the name of tenant t's FlowSchema.
func FlowSchemaName(t string) string { return "tenant.io-" + t }

// FlowSchema is tenant t's FlowSchema: every request its members (users,
// groups, the host groups tenant.io:<t> and tenant.io-<t>) and the service accounts of its
// host namespaces send to the host, in TenantsPriorityLevel, with no
// distinguisher, so that all of them are one flow. However many users and
// service accounts a tenant floods the host with, they queue in that one
// flow, and APF serves each tenant's flow in turn.
func FlowSchema(t *tenant.Tenant, hostNamespaces []string) *flowcontrolv1.FlowSchema {
	var subjects []flowcontrolv1.Subject
	for _, u := range t.Spec.Members.Users {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: u}})
	}
	for _, g := range append(slices.Clone(t.Spec.Members.Groups), tenancy.TenantGroups(t.Name)...) {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: g}})
	}
	for _, ns := range hostNamespaces {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
			ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: flowcontrolv1.NameAll}})
	}
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: hostnames.ChangedBy(t)}
	return &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: FlowSchemaName(t.Name), Labels: marks.Labels(), Annotations: marks.Annotations()},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: TenantsPriorityLevel},
			MatchingPrecedence:         FlowSchemaPrecedence,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: subjects,
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{flowcontrolv1.VerbAll}, APIGroups: []string{flowcontrolv1.APIGroupAll}, Resources: []string{flowcontrolv1.ResourceAll},
					ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery},
				}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{
					Verbs: []string{flowcontrolv1.VerbAll}, NonResourceURLs: []string{flowcontrolv1.NonResourceAll},
				}},
			}},
		},
	}
}

// hostNamespaces are, sorted, the host namespaces of t's Namespaces.
func (c *Controller) hostNamespaces(t *tenant.Tenant) []string {
	objs, err := c.src.Namespaces.GetIndexer().ByIndex(controller.ByTenant, t.Name)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		out = append(out, hostnames.Namespace(t.Name, t.UID, obj.(*tenant.Namespace).Name))
	}
	slices.Sort(out)
	return out
}

// syncFlowSchema makes t's FlowSchema match; a problem is a name taken by
// someone else's FlowSchema, or one being deleted.
func (c *Controller) syncFlowSchema(ctx context.Context, t *tenant.Tenant) (string, error) {
	marks := hostnames.Marks{Tenant: t.Name, TenantUID: t.UID, OwnerUID: t.UID, ChangedBy: hostnames.ChangedBy(t)}
	if !c.FlowSchemas {
		_, err := c.kinds.FlowSchemas.Remove(ctx, "", FlowSchemaName(t.Name), marks)
		return "", err
	}
	want := FlowSchema(t, c.hostNamespaces(t))
	got, err := c.kinds.FlowSchemas.Ensure(ctx, want, marks)
	if err != nil || got.Synced {
		return "", err
	}
	return got.Message, nil
}
