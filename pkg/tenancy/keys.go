package tenancy

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// TenantLabel is the label, set by the server on every tenant-owned object,
// that names its tenant: the label that names the tenant of a host object.
const TenantLabel = hostnames.TenantLabel

// TenantUIDLabel is the label, set by the server on every tenant-owned
// object, that holds the UID of its tenant: tenant reads select on it, so a
// tenant never sees the history of a former tenant of the same name.
const TenantUIDLabel = "tenant.io/tenant-uid"

// noTenantSegment is the key segment of callers who are members of no
// tenant. It can never be a tenant name (those are DNS labels), so the key
// range under it is always empty.
const noTenantSegment = "-"

func tenantSegment(ctx context.Context) string {
	if t, ok := TenantFrom(ctx); ok && t != "" {
		return t
	}
	return noTenantSegment
}

// KeyRootFunc returns the storage key root of the caller's tenant, and of
// its namespace when the resource is namespaced and the request names one;
// in a WithAllTenants context, the root of every tenant.
// The root always ends in "/" so tenant "t1" never reads the range of "t10".
func KeyRootFunc(prefix string, namespaced bool) func(ctx context.Context) string {
	return func(ctx context.Context) string {
		if allTenants(ctx) {
			return prefix + "/"
		}
		root := prefix + "/" + tenantSegment(ctx) + "/"
		if namespaced {
			if ns, ok := genericapirequest.NamespaceFrom(ctx); ok && ns != "" {
				root += ns + "/"
			}
		}
		return root
	}
}

// KeyFunc returns the storage key of one object of the caller's tenant.
func KeyFunc(prefix string, namespaced bool) func(ctx context.Context, name string) (string, error) {
	return func(ctx context.Context, name string) (string, error) {
		if allTenants(ctx) {
			return "", fmt.Errorf("no single tenant to key %q in", name)
		}
		if err := checkSegment("name", name); err != nil {
			return "", err
		}
		if !namespaced {
			return prefix + "/" + tenantSegment(ctx) + "/" + name, nil
		}
		ns, ok := genericapirequest.NamespaceFrom(ctx)
		if !ok || ns == "" {
			return "", fmt.Errorf("namespace is required")
		}
		if err := checkSegment("namespace", ns); err != nil {
			return "", err
		}
		return prefix + "/" + tenantSegment(ctx) + "/" + ns + "/" + name, nil
	}
}

// ObjectKeyFunc returns the storage key of a stored object from its tenant
// label, name and namespace. The watch cache uses it to file objects.
func ObjectKeyFunc(prefix string, namespaced bool) func(obj runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		tenant := accessor.GetLabels()[TenantLabel]
		if tenant == "" {
			return "", fmt.Errorf("object %q has no %s label", accessor.GetName(), TenantLabel)
		}
		if namespaced {
			return prefix + "/" + tenant + "/" + accessor.GetNamespace() + "/" + accessor.GetName(), nil
		}
		return prefix + "/" + tenant + "/" + accessor.GetName(), nil
	}
}

// checkSegment refuses names that would escape their key range.
func checkSegment(what, s string) error {
	if s == "" || s == "." || s == ".." || strings.Contains(s, "/") {
		return fmt.Errorf("%s %q may not be used as a key segment", what, s)
	}
	return nil
}
