package outage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// hostProblems compares every Tenant of the test of prefix (see ofTest),
// its Namespaces and Networks with the
// host: each Tenant is Ready, its usage counts what it has, and it has its
// MetalLB pool; each Namespace is synced, with its host namespace and
// members RoleBinding owned by it; each Network is synced, with its
// ClusterUserDefinedNetwork owned by it; and no host namespace,
// RoleBinding, ClusterUserDefinedNetwork or pool of the syncer is left
// without a live owner (objects already being deleted aside). It returns
// the problems, none once the syncer has converged.
func hostProblems(ctx context.Context, t *testing.T, prefix string) []string {
	t.Helper()
	s := theStack()
	admin := adminClient(t)
	host, dyn, err := s.Clients(stack.AdminUser)
	if err != nil {
		t.Fatal(err)
	}
	var p []string
	tenants, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"listing tenants: " + err.Error()}
	}
	liveTenants := map[types.UID]bool{}
	liveOwners := map[types.UID]bool{}
	for i := range tenants.Items {
		tn := &tenants.Items[i]
		if !ofTest(tn.Name, prefix) {
			continue
		}
		liveTenants[tn.UID] = true
		if tn.DeletionTimestamp != nil {
			p = append(p, fmt.Sprintf("tenant %s is being deleted", tn.Name))
			continue
		}
		if !tenantReady(tn) {
			p = append(p, fmt.Sprintf("tenant %s: phase %q, conditions %s", tn.Name, tn.Status.Phase, describeConditions(tn.Status.Conditions)))
		}
		cs := tenantClientFor(t, inTenant(t, tn.Name))
		nss, err := cs.TenantV1alpha1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return append(p, fmt.Sprintf("listing the Namespaces of %s: %v", tn.Name, err))
		}
		nets, err := cs.TenantV1alpha1().Networks().List(ctx, metav1.ListOptions{})
		if err != nil {
			return append(p, fmt.Sprintf("listing the Networks of %s: %v", tn.Name, err))
		}
		if u := tn.Status.Usage; u.Namespaces != int32(len(nss.Items)) || u.Networks != int32(len(nets.Items)) {
			p = append(p, fmt.Sprintf("tenant %s: usage %d namespaces, %d networks; it has %d and %d", tn.Name, u.Namespaces, u.Networks, len(nss.Items), len(nets.Items)))
		}
		for i := range nss.Items {
			ns := &nss.Items[i]
			liveOwners[ns.UID] = true
			where := "Namespace " + tn.Name + "/" + ns.Name
			if !namespaceSynced(ns.Status.Conditions) || ns.Status.Phase != tenantv1alpha1.NamespacePhaseActive {
				p = append(p, fmt.Sprintf("%s: phase %q, conditions %s", where, ns.Status.Phase, describeConditions(ns.Status.Conditions)))
			}
			name := hostnames.Namespace(tn.Name, tn.UID, ns.Name)
			hn, err := host.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				p = append(p, fmt.Sprintf("%s: host namespace %s: %v", where, name, err))
				continue
			case hn.DeletionTimestamp != nil:
				p = append(p, fmt.Sprintf("%s: host namespace %s is being deleted", where, name))
			case !hostnames.OwnedBy(hn, ns.UID):
				p = append(p, fmt.Sprintf("%s: host namespace %s is owned by %q", where, name, hn.Annotations[hostnames.OwnerUIDAnnotation]))
			}
			rb, err := host.RbacV1().RoleBindings(name).Get(ctx, hostnames.MembersRoleBinding, metav1.GetOptions{})
			switch {
			case err != nil:
				p = append(p, fmt.Sprintf("%s: RoleBinding %s/%s: %v", where, name, hostnames.MembersRoleBinding, err))
			case !hostnames.OwnedBy(rb, ns.UID):
				p = append(p, fmt.Sprintf("%s: RoleBinding %s/%s is owned by %q", where, name, rb.Name, rb.Annotations[hostnames.OwnerUIDAnnotation]))
			}
		}
		for i := range nets.Items {
			n := &nets.Items[i]
			liveOwners[n.UID] = true
			where := "Network " + tn.Name + "/" + n.Name
			if !networkSynced(n.Status.Conditions) {
				p = append(p, fmt.Sprintf("%s: conditions %s", where, describeConditions(n.Status.Conditions)))
			}
			name := hostnames.ClusterUserDefinedNetwork(tn.UID, n.Name)
			cudn, err := dyn.Resource(cudnGVR).Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				p = append(p, fmt.Sprintf("%s: ClusterUserDefinedNetwork %s: %v", where, name, err))
			case cudn.GetDeletionTimestamp() != nil:
				p = append(p, fmt.Sprintf("%s: ClusterUserDefinedNetwork %s is being deleted", where, name))
			case !hostnames.OwnedBy(cudn, n.UID):
				p = append(p, fmt.Sprintf("%s: ClusterUserDefinedNetwork %s is owned by %q", where, name, cudn.GetAnnotations()[hostnames.OwnerUIDAnnotation]))
			}
		}
		if len(tn.Status.PublicIPs) > 0 {
			name := hostnames.MetalLBPool(tn.Name, tn.UID)
			pool, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				p = append(p, fmt.Sprintf("tenant %s: IPAddressPool %s: %v", tn.Name, name, err))
			case !hostnames.OwnedBy(pool, tn.UID):
				p = append(p, fmt.Sprintf("tenant %s: IPAddressPool %s is owned by %q", tn.Name, name, pool.GetAnnotations()[hostnames.OwnerUIDAnnotation]))
			}
		}
	}

	// Orphans: objects of the syncer whose tenant object is gone.
	selector := metav1.ListOptions{LabelSelector: hostnames.TenantLabel}
	hns, err := host.CoreV1().Namespaces().List(ctx, selector)
	if err != nil {
		return append(p, "listing host namespaces: "+err.Error())
	}
	terminating := map[string]bool{}
	for _, hn := range hns.Items {
		if !ofTest(hn.Labels[hostnames.TenantLabel], prefix) {
			continue
		}
		if hn.DeletionTimestamp != nil {
			terminating[hn.Name] = true
			continue
		}
		if owner := types.UID(hn.Annotations[hostnames.OwnerUIDAnnotation]); !liveOwners[owner] {
			p = append(p, fmt.Sprintf("orphan host namespace %s (owner %q, tenant %s)", hn.Name, owner, hn.Labels[hostnames.TenantLabel]))
		}
	}
	rbs, err := host.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, selector)
	if err != nil {
		return append(p, "listing RoleBindings: "+err.Error())
	}
	for _, rb := range rbs.Items {
		if !ofTest(rb.Labels[hostnames.TenantLabel], prefix) || rb.DeletionTimestamp != nil || terminating[rb.Namespace] {
			continue
		}
		if owner := types.UID(rb.Annotations[hostnames.OwnerUIDAnnotation]); !liveOwners[owner] && !liveTenants[owner] {
			p = append(p, fmt.Sprintf("orphan RoleBinding %s/%s (owner %q)", rb.Namespace, rb.Name, owner))
		}
	}
	cudns, err := dyn.Resource(cudnGVR).List(ctx, selector)
	if err != nil {
		return append(p, "listing ClusterUserDefinedNetworks: "+err.Error())
	}
	for _, c := range cudns.Items {
		if !ofTest(c.GetLabels()[hostnames.TenantLabel], prefix) || c.GetDeletionTimestamp() != nil {
			continue
		}
		if owner := types.UID(c.GetAnnotations()[hostnames.OwnerUIDAnnotation]); !liveOwners[owner] {
			p = append(p, fmt.Sprintf("orphan ClusterUserDefinedNetwork %s (owner %q, %s)", c.GetName(), owner, c.GetLabels()))
		}
	}
	pools, err := dyn.Resource(poolGVR).Namespace(stack.MetalLBNamespace).List(ctx, selector)
	if err != nil {
		return append(p, "listing IPAddressPools: "+err.Error())
	}
	for _, pool := range pools.Items {
		if !ofTest(pool.GetLabels()[hostnames.TenantLabel], prefix) || pool.GetDeletionTimestamp() != nil {
			continue
		}
		if owner := types.UID(pool.GetAnnotations()[hostnames.OwnerUIDAnnotation]); !liveTenants[owner] {
			p = append(p, fmt.Sprintf("orphan IPAddressPool %s (owner %q)", pool.GetName(), owner))
		}
	}
	slices.Sort(p)
	return p
}

// synced reports whether conditions say HostSynced and Ready.
func synced(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, tenantv1alpha1.ConditionHostSynced) &&
		meta.IsStatusConditionTrue(conds, tenantv1alpha1.ConditionReady)
}

// namespaceSynced reports whether a Namespace's conditions say HostSynced
// and Ready, or HostSynced with Ready false only because OVN-Kubernetes
// has not rendered its network into the host namespace yet: how soon
// cluster-manager does is not the syncer's (it was seen to take a minute),
// and the Namespace says so, as it should.
func namespaceSynced(conds []metav1.Condition) bool {
	if synced(conds) {
		return true
	}
	ready := meta.FindStatusCondition(conds, tenantv1alpha1.ConditionReady)
	return meta.IsStatusConditionTrue(conds, tenantv1alpha1.ConditionHostSynced) && ready != nil && ready.Reason == "NetworkNotAttached"
}

// networkSynced reports whether a Network's conditions say HostSynced
// and Ready, or HostSynced with Ready false only because OVN-Kubernetes
// still holds the NetworkAttachmentDefinition of a host namespace being
// deleted. OVN-Kubernetes removes that NAD's finalizer once its namespace
// informer reports the namespace terminating, which the stack's
// cluster-manager was seen to do minutes late (until its informer
// relisted): the syncer's part, the ClusterUserDefinedNetwork, is done,
// and the Network reports what OVN-Kubernetes says, as it should.
func networkSynced(conds []metav1.Condition) bool {
	if synced(conds) {
		return true
	}
	created := meta.FindStatusCondition(conds, tenantv1alpha1.ConditionNetworkCreated)
	return meta.IsStatusConditionTrue(conds, tenantv1alpha1.ConditionHostSynced) &&
		created != nil && created.Status == metav1.ConditionFalse && created.Reason == "NetworkAttachmentDefinitionDeleted"
}

// ofTest says whether tenant is one of a test's, whose tenants are named
// <prefix>-<something>. Each test checks only its own tenants and their
// host objects: what an earlier test left on the host is that test's.
func ofTest(tenant, prefix string) bool { return strings.HasPrefix(tenant, prefix+"-") }

// waitConverged waits until hostProblems finds nothing for the tenants of
// the test of prefix, and returns how long that took.
func waitConverged(ctx context.Context, t *testing.T, prefix string) time.Duration {
	t.Helper()
	return eventually(ctx, t, recoverTimeout, "the host converged with the tenants' objects", func(ctx context.Context) (bool, string) {
		p := hostProblems(ctx, t, prefix)
		if len(p) > 20 {
			p = append(p[:20], fmt.Sprintf("... and %d more", len(p)-20))
		}
		return len(p) == 0, strings.Join(p, "; ")
	})
}

// waitIPAMClean waits until IPAM has no duplicate and no leaked address
// (the sweeper has reclaimed what a failed request left), and reports
// what it counted.
func waitIPAMClean(ctx context.Context, t *testing.T) (framework.IPAMReport, time.Duration) {
	t.Helper()
	admin := adminClient(t)
	var rep framework.IPAMReport
	duplicates := map[string]bool{}
	took := eventually(ctx, t, recoverTimeout, "IPAM without duplicates or leaks", func(ctx context.Context) (bool, string) {
		list, err := admin.TenantV1alpha1().Tenants().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var p []string
		p, rep, err = framework.IPAMProblems(ctx, etcdClient, list.Items)
		if err != nil {
			return false, err.Error()
		}
		if rep.Duplicates > 0 {
			// A leak is reclaimed by the sweeper in time; an address given
			// twice never heals: it counts even if the owners go away.
			for _, d := range p {
				duplicates[d] = true
			}
		}
		return len(p) == 0, fmt.Sprintf("%+v: %s", rep, strings.Join(p, "; "))
	})
	if len(duplicates) > 0 {
		t.Errorf("IPAM gave addresses twice: %s", strings.Join(sortedKeys(duplicates), "; "))
	}
	return rep, took
}
