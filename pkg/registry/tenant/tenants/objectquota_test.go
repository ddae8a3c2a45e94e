package tenants

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

func TestDefaultObjectQuota(t *testing.T) {
	q := resource.MustParse
	defaults := corev1.ResourceList{"services": q("100"), "secrets": q("200"), "persistentvolumeclaims": q("50")}
	for _, tc := range []struct {
		name             string
		compute, objects corev1.ResourceList
		want             corev1.ResourceList
	}{
		{name: "none set", want: defaults},
		{name: "the provider's own count wins", objects: corev1.ResourceList{"services": q("5")},
			want: corev1.ResourceList{"services": q("5"), "secrets": q("200"), "persistentvolumeclaims": q("50")}},
		{name: "a count that compute limits is left to compute", compute: corev1.ResourceList{"persistentvolumeclaims": q("3")},
			want: corev1.ResourceList{"services": q("100"), "secrets": q("200")}},
		{name: "a zero is kept", objects: corev1.ResourceList{"secrets": q("0")},
			want: corev1.ResourceList{"services": q("100"), "secrets": q("0"), "persistentvolumeclaims": q("50")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &tenant.Tenant{Spec: tenant.TenantSpec{Quota: tenant.TenantQuota{Compute: tc.compute, Objects: tc.objects}}}
			if _, err := defaultObjectQuota(defaults)(context.Background(), &kindstore.Write[*tenant.Tenant]{Obj: obj}); err != nil {
				t.Fatal(err)
			}
			if !apiequality.Semantic.DeepEqual(obj.Spec.Quota.Objects, tc.want) {
				t.Errorf("objects %v, want %v", obj.Spec.Quota.Objects, tc.want)
			}
		})
	}
	// The defaults themselves are never shared with a Tenant.
	obj := &tenant.Tenant{}
	if _, err := defaultObjectQuota(defaults)(context.Background(), &kindstore.Write[*tenant.Tenant]{Obj: obj}); err != nil {
		t.Fatal(err)
	}
	obj.Spec.Quota.Objects["services"] = q("1")
	if got := defaults["services"]; got.Cmp(q("100")) != 0 {
		t.Errorf("a Tenant's change reached the defaults: services %s", got.String())
	}
}
