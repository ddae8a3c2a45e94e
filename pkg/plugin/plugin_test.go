package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

func TestParsePorts(t *testing.T) {
	for _, c := range []struct {
		in    string
		port  int32
		proto tenantv1alpha1.Protocol
		bad   bool
	}{
		{"22", 22, "TCP", false}, {"53/udp", 53, "UDP", false}, {"9/SCTP", 9, "SCTP", false},
		{"x/tcp", 0, "", true}, {"80/icmp", 0, "", true}, {"", 0, "", true},
	} {
		port, proto, err := tenantview.ParsePort(c.in)
		if (err != nil) != c.bad || (!c.bad && (port != c.port || proto != c.proto)) {
			t.Errorf("tenantview.ParsePort(%q) = %d %s %v", c.in, port, proto, err)
		}
	}
	lb, err := tenantview.ParseLBPort("80:http/udp")
	if err != nil || lb.Port != 80 || lb.TargetPort != intstr.FromString("http") || lb.Protocol != "UDP" {
		t.Errorf("tenantview.ParseLBPort(80:http/udp) = %+v %v", lb, err)
	}
	lb, err = tenantview.ParseLBPort("443:8443")
	if err != nil || lb.TargetPort != intstr.FromInt32(8443) || lb.Protocol != "TCP" {
		t.Errorf("tenantview.ParseLBPort(443:8443) = %+v %v", lb, err)
	}
	if _, err := tenantview.ParseLBPort("http:80"); err == nil {
		t.Errorf("tenantview.ParseLBPort(http:80): no error")
	}
}

func TestParseQuota(t *testing.T) {
	q, err := tenantview.ParseQuota(map[string]string{"namespaces": "5", "FloatingIPs": "2", "requests.cpu": "4", "count/virtualmachines.kubevirt.io": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if *q.Namespaces != 5 || *q.FloatingIPs != 2 || q.Networks != nil || q.LoadBalancers != nil {
		t.Errorf("counts: %+v", q)
	}
	if !q.Compute[corev1.ResourceRequestsCPU].Equal(resource.MustParse("4")) || len(q.Compute) != 2 {
		t.Errorf("compute: %v", q.Compute)
	}
	for _, bad := range []map[string]string{{"networks": "many"}, {"requests.memory": "lots"}} {
		if _, err := tenantview.ParseQuota(bad); err == nil {
			t.Errorf("tenantview.ParseQuota(%v): no error", bad)
		}
	}
}

func TestBar(t *testing.T) {
	for _, c := range []struct {
		used, total int64
		want        string
	}{
		{0, 10, "[----------]   0%"}, {1, 1000, "[#---------]   0%"}, {5, 10, "[#####-----]  50%"}, {10, 10, "[##########] 100%"}, {0, 0, "[----------]   -"},
	} {
		if got := bar(c.used, c.total, 10); got != c.want {
			t.Errorf("bar(%d, %d) = %q, want %q", c.used, c.total, got, c.want)
		}
	}
}

func TestPrintError(t *testing.T) {
	err := apierrors.NewInvalid(schema.GroupKind{Group: "tenant.io", Kind: "Network"}, "blue", field.ErrorList{
		field.Invalid(field.NewPath("spec", "subnets").Index(0), "192.168.0.0/24", "must be inside the tenant's block"),
		field.Required(field.NewPath("spec", "topology"), ""),
	})
	var out bytes.Buffer
	PrintError(&out, err)
	want := `Error from server (Invalid): Network.tenant.io "blue" is invalid: [spec.subnets[0]: Invalid value: "192.168.0.0/24": must be inside the tenant's block, spec.topology: Required value]
  spec.subnets[0]: Invalid value: "192.168.0.0/24": must be inside the tenant's block
  spec.topology: Required value
`
	if out.String() != want {
		t.Errorf("PrintError:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	PrintError(&out, errString("no kubeconfig"))
	if out.String() != "error: no kubeconfig\n" {
		t.Errorf("PrintError of a plain error: %q", out.String())
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestInfoDNSNames: info lists the public DNS names of the addresses that
// have one, by name, and has no such section when none has.
func TestInfoDNSNames(t *testing.T) {
	info := &tenantview.Info{Tenant: "acme", PublicIPs: []tenantview.PublicIP{
		{Address: "203.0.113.9", UsedBy: "FloatingIP", Namespace: "dev", Name: "ssh", DNSName: "ssh.dev.acme.tenants.example.net"},
		{Address: "203.0.113.7", UsedBy: "LoadBalancer", Namespace: "dev", Name: "web", DNSName: "web.dev.acme.tenants.example.net"},
		{Address: "203.0.113.8", UsedBy: "NATGateway", Name: "default"},
		{Address: "203.0.113.10"},
	}}
	var b strings.Builder
	if err := writeInfo(&b, info); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "\nPublic DNS names:\n" +
		"  ssh.dev.acme.tenants.example.net   203.0.113.9   FloatingIP\n" +
		"  web.dev.acme.tenants.example.net   203.0.113.7   LoadBalancer\n"
	if !strings.Contains(out, want) {
		t.Errorf("info:\n%s\nwant the section\n%s", out, want)
	}
	info.PublicIPs[0].DNSName, info.PublicIPs[1].DNSName = "", ""
	b.Reset()
	if err := writeInfo(&b, info); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "DNS") {
		t.Errorf("info without DNS names:\n%s", b.String())
	}
}

func TestHostFlags(t *testing.T) {
	sel, err := hostSelector("rack=r1,gpu in (a100,h100)")
	if err != nil || sel.MatchLabels["rack"] != "r1" || len(sel.MatchExpressions) != 1 || sel.MatchExpressions[0].Key != "gpu" {
		t.Errorf("hostSelector: %+v %v", sel, err)
	}
	if sel, err := hostSelector(" "); sel != nil || err != nil {
		t.Errorf("hostSelector of nothing: %+v %v", sel, err)
	}
	if _, err := hostSelector("rack in r1"); err == nil {
		t.Errorf("hostSelector(rack in r1): no error")
	}
	img, err := (&imageFlags{url: "https://images.example.net/a.qcow2", checksum: "abc", format: "qcow2"}).image()
	if err != nil || *img != (tenantv1alpha1.HostImage{URL: "https://images.example.net/a.qcow2", Checksum: "abc", Format: "qcow2"}) {
		t.Errorf("image: %+v %v", img, err)
	}
	if img, err := (&imageFlags{}).image(); img != nil || err != nil {
		t.Errorf("no image flags: %+v %v", img, err)
	}
	if _, err := (&imageFlags{checksum: "abc"}).image(); err == nil {
		t.Errorf("--checksum without --image: no error")
	}
}

// TestInfoHosts: info lists the tenant's host claims, and has no such
// section without any.
func TestInfoHosts(t *testing.T) {
	info := &tenantview.Info{Tenant: "acme", Hosts: []tenantview.HostInfo{
		{Name: "db-1", Namespace: "dev", HostClass: "metal", Phase: "Provisioned", Address: "192.0.2.10", Power: "On"},
		{Name: "db-2", Namespace: "dev", HostClass: "metal", Phase: "Pending"},
	}}
	var b strings.Builder
	if err := writeInfo(&b, info); err != nil {
		t.Fatal(err)
	}
	want := "\nHosts (kubectl tenant host list -A):\n" +
		"  NAME   NAMESPACE   CLASS   PHASE         ADDRESS      POWER\n" +
		"  db-1   dev         metal   Provisioned   192.0.2.10   On\n" +
		"  db-2   dev         metal   Pending       <none>       <none>\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("info:\n%s\nwant the section\n%s", b.String(), want)
	}
	info.Hosts = nil
	b.Reset()
	if err := writeInfo(&b, info); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Hosts") {
		t.Errorf("info without hosts:\n%s", b.String())
	}
}

// TestRoutesTable: routes prints the tenant Namespace, not the host's, the
// gateway's verdict as it is (Unknown without status), and -o name the
// resource of each route's own kind; info prints the route domain.
func TestRoutesTable(t *testing.T) {
	web := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
		"metadata": map[string]any{"name": "web", "namespace": "acme-1a2b3c-dev"},
		"spec": map[string]any{"hostnames": []any{"www.acme.apps.example.net", "acme.apps.example.net"},
			"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "web"}, map[string]any{"name": "api", "namespace": "acme-1a2b3c-prod"}}}}},
		"status": map[string]any{"parents": []any{map[string]any{"parentRef": map[string]any{"name": "shared"},
			"conditions": []any{map[string]any{"type": "Accepted", "status": "False", "reason": "NotAllowedByListeners"}}}}},
	}}
	grpc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GRPCRoute",
		"metadata": map[string]any{"name": "api", "namespace": "acme-1a2b3c-dev"},
		"spec":     map[string]any{"hostnames": []any{"api.acme.apps.example.net"}},
	}}
	names := map[string]string{"acme-1a2b3c-dev": "dev", "acme-1a2b3c-prod": "prod"}
	routes := []tenantview.Route{tenantview.NewRoute(web, "dev", names), tenantview.NewRoute(grpc, "dev", names)}
	var out bytes.Buffer
	o := &Options{IOStreams: genericiooptions.IOStreams{Out: &out, ErrOut: &out}, Now: time.Now}
	if err := o.printListing(routesListing(routes, o)); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE   NAME   KIND        HOSTNAMES                                         ACCEPTED                        BACKENDS\n" +
		"dev         web    HTTPRoute   www.acme.apps.example.net,acme.apps.example.net   False (NotAllowedByListeners)   web,prod/api\n" +
		"dev         api    GRPCRoute   api.acme.apps.example.net                         Unknown                         <none>\n"
	if out.String() != want {
		t.Errorf("routes:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	o.Output = "name"
	if err := o.printListing(routesListing(routes, o)); err != nil {
		t.Fatal(err)
	}
	if want := "httproute.gateway.networking.k8s.io/web\ngrpcroute.gateway.networking.k8s.io/api\n"; out.String() != want {
		t.Errorf("routes -o name:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	o.Output = "json"
	if err := o.printListing(routesListing(routes, o)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"kind": "GRPCRoute"`) || !strings.Contains(out.String(), `"kind": "HTTPRoute"`) {
		t.Errorf("routes -o json keeps each route's kind:\n%s", out.String())
	}

	out.Reset()
	if err := writeInfo(&out, &tenantview.Info{Tenant: "acme", RouteDomain: "acme.apps.example.net"}); err != nil {
		t.Fatal(err)
	}
	mustHave := "Route domain:   acme.apps.example.net\n"
	if !strings.Contains(out.String(), mustHave) {
		t.Errorf("info:\n%s\nwant %q", out.String(), mustHave)
	}
	out.Reset()
	if err := writeInfo(&out, &tenantview.Info{Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Route domain:   <none>\n") {
		t.Errorf("info without a route domain:\n%s", out.String())
	}
}
