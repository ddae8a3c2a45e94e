package dns

import (
	"context"
	"testing"
	"time"

	"github.com/miekg/dns"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// TestPublicNames: a FloatingIP's address has its name in the public zone,
// for any resolver, and loses it when the FloatingIP goes.
func TestPublicNames(t *testing.T) {
	makeWorld(t)
	ctx := context.Background()
	alice, err := framework.Current().TenantClient("alice")
	if err != nil {
		t.Fatal(err)
	}
	fip := &tenantv1alpha1.FloatingIP{ObjectMeta: metav1.ObjectMeta{Name: "ssh", Namespace: "dev"}}
	if _, err := alice.TenantV1alpha1().FloatingIPs("dev").Create(ctx, fip, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var name, addr string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := alice.TenantV1alpha1().FloatingIPs("dev").Get(ctx, "ssh", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		name, addr = got.Status.DNSName, got.Status.Address
		return name != "" && addr != "", nil
	})
	if err != nil {
		t.Fatalf("FloatingIP ssh has no status.dnsName and address: %v", err)
	}
	if want := "ssh.dev.acme." + publicZone; name != want {
		t.Errorf("status.dnsName %q, want %q", name, want)
	}
	for _, src := range []string{hostSource, globexDev, acmeDev} {
		eventually(t, src, name+".", dns.TypeA, "NOERROR A "+addr)
	}
	eventually(t, hostSource, "dev.acme."+publicZone+".", dns.TypeA, "NOERROR")
	eventually(t, hostSource, "nosuch.dev.acme."+publicZone+".", dns.TypeA, "NXDOMAIN")
	if err := alice.TenantV1alpha1().FloatingIPs("dev").Delete(ctx, "ssh", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, hostSource, name+".", dns.TypeA, "NXDOMAIN")
}
