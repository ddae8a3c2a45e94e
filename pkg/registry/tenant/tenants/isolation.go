package tenants

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NoTenantDNSMessage is why a Tenant is refused Hard isolation by a server
// started without --tenant-dns-address.
const NoTenantDNSMessage = "Hard isolation needs the provider's tenant DNS server; this server was started without --tenant-dns-address"

// hardIsolation refuses (422 on spec.isolation) to make a Tenant Hard when
// the server knows no tenant DNS server (address empty): its pods would be
// told to resolve through nothing, or the isolation would be claimed and
// not enforced. A Tenant already Hard keeps its other updates (its members
// above all) on a server started without the address; the syncer then
// reports its host namespaces not synced, and leaves their nameserver as
// it was.
func hardIsolation(address string) kindstore.WriteFunc[*tenant.Tenant] {
	return func(_ context.Context, w *kindstore.Write[*tenant.Tenant]) (genericregistry.FinishFunc, error) {
		if address != "" || w.Obj.Spec.Isolation != tenant.TenantIsolationHard {
			return noFinish, nil
		}
		if w.Update && w.Old != nil && w.Old.Spec.Isolation == tenant.TenantIsolationHard {
			return noFinish, nil
		}
		return nil, apierrors.NewInvalid(tenant.Kind("Tenant"), w.Obj.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "isolation"), w.Obj.Spec.Isolation, NoTenantDNSMessage)})
	}
}
