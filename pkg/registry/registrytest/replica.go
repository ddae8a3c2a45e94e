package registrytest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apiserver"
	"tenant.io/tenant-apiserver/pkg/ipam"
	"tenant.io/tenant-apiserver/pkg/ipam/upkeep"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
	"tenant.io/tenant-apiserver/pkg/tenancy"
)

// Users of the fixtures: a provider admin, and members of tenants acme,
// globex, tiny and five by their host groups.
var (
	Admin = &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}
	Alice = &user.DefaultInfo{Name: "alice", Groups: []string{"tenant.io:acme"}}
	Bob   = &user.DefaultInfo{Name: "bob", Groups: []string{"tenant.io:globex"}}
	Tina  = &user.DefaultInfo{Name: "tina", Groups: []string{"tenant.io:tiny"}}
	Fiona = &user.DefaultInfo{Name: "fiona", Groups: []string{"tenant.io:five"}}
)

// As is the context of a request of u outside namespaces.
func As(u user.Info) context.Context { return AsIn(u, "") }

// AsIn is the context of a request of u in tenant Namespace ns.
func AsIn(u user.Info, ns string) context.Context {
	return genericapirequest.WithUser(genericapirequest.WithNamespace(genericapirequest.NewContext(), ns), u)
}

// tenantResolver resolves tenant groups, with the UIDs of the stored
// Tenants, as the server's Membership does.
type tenantResolver struct {
	tenancy.GroupResolver
	tenants *genericregistry.Store
}

func (r *tenantResolver) TenantUID(name string) (types.UID, bool) {
	obj, err := r.tenants.Get(genericapirequest.WithNamespace(context.Background(), ""), name, &metav1.GetOptions{})
	if err != nil {
		return "", false
	}
	return obj.(*tenant.Tenant).UID, true
}

// Replica is one tenant-apiserver's storage of every kind, as the server
// builds it, on an etcd that replicas may share.
type Replica struct {
	Storage *kindstore.Storages
	// IPAM is the upkeep of its claims (nil without IPAM); the tests run
	// its sweeps and repairs themselves.
	IPAM *upkeep.Controller
	// TenantSpace is the keyspace of tenant objects' claims.
	TenantSpace *ipam.Allocator
}

// NewReplica builds a Replica on the etcd at url, with IPAM or, as before
// the registry claimed addresses, without, and waits until its storage is
// ready. Callers resolve to tenants by their host groups.
func NewReplica(t testing.TB, url string, withIPAM bool) *Replica {
	t.Helper()
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	spaces := kindstore.IPAM{
		Allocator:   ipam.New(client, "/registry/tenant.io/ipam"),
		PoolSpace:   ipam.New(client, "/registry/tenant.io/ipam-pools"),
		TenantSpace: ipam.New(client, "/registry/tenant.io/ipam-local"),
	}
	t.Cleanup(spaces.Allocator.Close)
	t.Cleanup(spaces.PoolSpace.Close)
	t.Cleanup(spaces.TenantSpace.Close)
	r := &Replica{TenantSpace: spaces.TenantSpace}
	resolver := &tenantResolver{}
	deps := kindstore.Deps{Resolver: resolver}
	if withIPAM {
		deps.IPAM = spaces
	}
	r.Storage, err = apiserver.NewStorage(RESTOptionsGetter(url, true), deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range r.Storage.List() {
			s.Main.Destroy()
		}
	})
	resolver.tenants = r.Storage.Tenants.Store
	for _, s := range r.Storage.List() {
		err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
			return s.Store.Storage.Storage.ReadinessCheck() == nil, nil
		})
		if err != nil {
			t.Fatalf("storage of %s not ready: %v", s.Store.DefaultQualifiedResource, err)
		}
	}
	if withIPAM {
		r.IPAM = apiserver.NewIPAMUpkeep(r.Storage, spaces.Allocator, time.Hour, 0)
	}
	return r
}
