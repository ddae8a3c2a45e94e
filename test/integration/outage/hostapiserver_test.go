package outage

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestHostAPIServerRestart restarts the host kube-apiserver, whose
// aggregator carries the tenants' watches, while the tenants write
// straight to the tenant-apiserver. The watches through the aggregator
// end; their clients watch again from the last resourceVersion they saw
// once the host is back and receive what was written meanwhile, with no
// event lost or repeated (compared with etcd).
func TestHostAPIServerRestart(t *testing.T) {
	ctx := framework.Context(t, 15*time.Minute)
	s := theStack()
	names, members := onboardTenants(ctx, t, "hostrestart", tenantsPerTest)
	ws := startWatchers(ctx, t, members)
	tenantPID := s.PID("tenant-apiserver")

	// Each tenant writes through the aggregator, then straight to the
	// tenant-apiserver while the host is down. With the host down the
	// tenant-apiserver can authorize only what delegated authorization
	// allows without asking the host (group system:masters); the tenant
	// still comes from the member's membership.
	type written struct {
		tenant   string
		resource schema.GroupVersionResource
		name     string
		rv       int64
	}
	write := func(ctx context.Context, d dynamic.Interface, tenant string, r schema.GroupVersionResource, op, name string) written {
		t.Helper()
		var obj *unstructured.Unstructured
		var err error
		switch op {
		case "create":
			obj, err = d.Resource(r).Create(ctx, (&writer{resource: r}).newObject(name, "1"), metav1.CreateOptions{})
		case "update":
			obj, err = d.Resource(r).Patch(ctx, name, types.MergePatchType, []byte(fmt.Sprintf(`{"metadata":{"labels":{%q:"2"}}}`, loadLabel)), metav1.PatchOptions{})
		case "delete":
			err = d.Resource(r).Delete(ctx, name, metav1.DeleteOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %s %s %s: %v", tenant, op, r.Resource, name, err)
		}
		w := written{tenant: tenant, resource: r, name: name}
		if obj != nil {
			w.rv = mustRV(t, obj.GetResourceVersion())
		}
		return w
	}
	resources := []schema.GroupVersionResource{namespacesGVR, networksGVR}
	for _, tn := range names {
		d := dynamicFor(t, s.RESTConfig(members[tn]))
		for _, r := range resources {
			write(ctx, d, tn, r, "create", "before")
			write(ctx, d, tn, r, "create", "gone")
		}
	}

	framework.StartHostOnCleanup(t, s)
	stoppedAt := time.Now()
	if err := s.StopHost(); err != nil {
		t.Fatalf("stopping the host kube-apiserver: %v", err)
	}
	t.Logf("host kube-apiserver stopped in %s", time.Since(stoppedAt).Round(100*time.Millisecond))

	// Written while the host is down: a create, an update and a delete of
	// each resource per tenant. A Namespace is deleted only once the host
	// says it runs no workload: with the host down its delete is a 503
	// and the Namespace stays.
	var offline []written
	for _, tn := range names {
		d := dynamicFor(t, s.DirectTenantConfig(members[tn], "system:masters"))
		for _, r := range resources {
			offline = append(offline,
				write(ctx, d, tn, r, "create", "offline"),
				write(ctx, d, tn, r, "update", "before"))
			if r == namespacesGVR {
				err := d.Resource(r).Delete(ctx, "gone", metav1.DeleteOptions{})
				if !apierrors.IsServiceUnavailable(err) {
					t.Errorf("%s: deleting Namespace gone with the host down: %v, want 503 (the host's workloads cannot be checked)", tn, err)
				}
				continue
			}
			offline = append(offline, write(ctx, d, tn, r, "delete", "gone"))
		}
	}
	// What the deletes were given: the latest revision of each resource
	// of each tenant, read from a list.
	latest := map[string]int64{}
	for _, tn := range names {
		d := dynamicFor(t, s.DirectTenantConfig(members[tn], "system:masters"))
		for _, r := range resources {
			list, err := d.Resource(r).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatalf("%s: listing %s with the host down: %v", tn, r.Resource, err)
			}
			latest[tn+" "+r.Resource] = mustRV(t, list.GetResourceVersion())
		}
	}
	for _, w := range ws.all {
		if n := w.endsAfter(stoppedAt); n == 0 {
			t.Errorf("%s: the watch through the stopped host did not end", w.name)
		}
	}

	startAt := time.Now()
	if err := s.StartHost(ctx); err != nil {
		t.Fatalf("starting the host kube-apiserver: %v", err)
	}
	hostReady := time.Now()
	t.Logf("host kube-apiserver ready %s after its start", hostReady.Sub(startAt).Round(100*time.Millisecond))

	// Every watch resumes and receives the writes made while the host was
	// down. A delete's revision is not in its answer: wait for the
	// revision a list gave after it, or for a later event.
	want := map[string]int64{}
	for _, w := range offline {
		key := w.tenant + " " + w.resource.Resource
		want[key] = max(want[key], w.rv)
	}
	resumed := eventually(ctx, t, recoverTimeout, "every watch resumed with the writes made while the host was down", func(context.Context) (bool, string) {
		for _, w := range ws.all {
			key := w.tenant + " " + w.resource.Resource
			if last := w.last(); last < want[key] {
				return false, fmt.Sprintf("%s: last resourceVersion %d, written %d", w.name, last, want[key])
			}
			if w.resource == networksGVR && !w.sawDelete("gone") {
				return false, fmt.Sprintf("%s: no DELETED gone yet (list resourceVersion %d)", w.name, latest[key])
			}
		}
		return true, ""
	})

	ws.verify(ctx, t, func(tenant string) dynamic.Interface { return dynamicFor(t, s.RESTConfig(members[tenant])) })
	waitConverged(ctx, t, "hostrestart")
	converged := time.Since(hostReady)
	if pid := s.PID("tenant-apiserver"); pid != tenantPID {
		t.Errorf("tenant-apiserver exited: pid %d before, %d now", tenantPID, pid)
	}
	t.Logf("FIGURES host kube-apiserver restarted: ready %s after its start; every watch resumed and caught up %s after the host was ready (%s after its start); host converged %s after it was ready",
		hostReady.Sub(startAt).Round(100*time.Millisecond), resumed.Round(10*time.Millisecond), (resumed + hostReady.Sub(startAt)).Round(10*time.Millisecond), converged.Round(100*time.Millisecond))
}
