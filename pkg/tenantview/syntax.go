package tenantview

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// The syntax users write ports, selectors and quotas in, in the plugin's
// flags and the console's forms alike.

// countQuotas are the --quota keys that are counts of tenant objects; any
// other key is a compute quota.
var countQuotas = map[string]func(*tenantv1alpha1.TenantQuota) **int32{
	"namespaces":    func(q *tenantv1alpha1.TenantQuota) **int32 { return &q.Namespaces },
	"networks":      func(q *tenantv1alpha1.TenantQuota) **int32 { return &q.Networks },
	"floatingips":   func(q *tenantv1alpha1.TenantQuota) **int32 { return &q.FloatingIPs },
	"loadbalancers": func(q *tenantv1alpha1.TenantQuota) **int32 { return &q.LoadBalancers },
	"hostclaims":    func(q *tenantv1alpha1.TenantQuota) **int32 { return &q.HostClaims },
}

// ParseQuota turns --quota k=v pairs into a TenantQuota: namespaces,
// networks, floatingips, loadbalancers and hostclaims are counts of tenant objects,
// services, secrets, configmaps and count/<resource> object counts on the
// host, anything else a compute resource (the server says which it
// accepts).
func ParseQuota(in map[string]string) (tenantv1alpha1.TenantQuota, error) {
	var q tenantv1alpha1.TenantQuota
	for k, v := range in {
		if field, ok := countQuotas[strings.ToLower(k)]; ok {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return q, fmt.Errorf("quota %s=%s: not a count", k, v)
			}
			n32 := int32(n)
			*field(&q) = &n32
			continue
		}
		amount, err := resource.ParseQuantity(v)
		if err != nil {
			return q, fmt.Errorf("quota %s=%s: %v", k, v, err)
		}
		list := &q.Compute
		if isObjectCount(k) {
			list = &q.Objects
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[corev1.ResourceName(k)] = amount
	}
	return q, nil
}

// isObjectCount says whether quota key k is an object count of
// spec.quota.objects: services, secrets, configmaps, or a count/ of any
// kind but KubeVirt's VMs (which, like pods and PVCs, compute counts).
func isObjectCount(k string) bool {
	switch k {
	case "services", "secrets", "configmaps":
		return true
	}
	return strings.HasPrefix(k, "count/") && k != "count/virtualmachines.kubevirt.io"
}

// ParsePort parses PORT[/PROTOCOL] (tcp when left out).
func ParsePort(s string) (int32, tenantv1alpha1.Protocol, error) {
	num, proto, _ := strings.Cut(s, "/")
	p, err := strconv.ParseInt(num, 10, 32)
	if err != nil {
		return 0, "", fmt.Errorf("%q is not a port number", num)
	}
	protocol, err := ParseProtocol(proto)
	return int32(p), protocol, err
}

// ParseProtocol parses tcp, udp or sctp in any case; "" is tcp.
func ParseProtocol(s string) (tenantv1alpha1.Protocol, error) {
	switch strings.ToLower(s) {
	case "", "tcp":
		return tenantv1alpha1.ProtocolTCP, nil
	case "udp":
		return tenantv1alpha1.ProtocolUDP, nil
	case "sctp":
		return tenantv1alpha1.ProtocolSCTP, nil
	}
	return "", fmt.Errorf("protocol %q is not tcp, udp or sctp", s)
}

// Target shows a FloatingIP's target as KIND/NAME, "-" without one.
func Target(t *tenantv1alpha1.FloatingIPTarget) string {
	if t == nil {
		return "-"
	}
	return string(t.Kind) + "/" + t.Name
}

// FIPPorts shows a FloatingIP's ports as PORT/PROTOCOL, comma-separated, "-" for all.
func FIPPorts(ports []tenantv1alpha1.FloatingIPPort) string {
	if len(ports) == 0 {
		return "-"
	}
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		out = append(out, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
	}
	return strings.Join(out, ",")
}

// LBPorts shows a LoadBalancer's ports as PORT[:TARGET]/PROTOCOL, comma-separated.
func LBPorts(ports []tenantv1alpha1.LoadBalancerPort) string {
	out := make([]string, 0, len(ports))
	for _, p := range ports {
		s := strconv.Itoa(int(p.Port))
		if p.TargetPort.String() != "0" && p.TargetPort.String() != s {
			s += ":" + p.TargetPort.String()
		}
		out = append(out, s+"/"+string(p.Protocol))
	}
	return strings.Join(out, ",")
}

// Selector shows a label selector as k=v pairs, sorted, comma-separated.
func Selector(sel map[string]string) string {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+sel[k])
	}
	return strings.Join(out, ",")
}

// ParseLBPort parses PORT[:TARGET][/PROTOCOL]; TARGET is a number or a
// named port.
func ParseLBPort(s string) (tenantv1alpha1.LoadBalancerPort, error) {
	spec, proto, _ := strings.Cut(s, "/")
	num, target, hasTarget := strings.Cut(spec, ":")
	p, err := strconv.ParseInt(num, 10, 32)
	if err != nil {
		return tenantv1alpha1.LoadBalancerPort{}, fmt.Errorf("%q is not a port number", num)
	}
	protocol, err := ParseProtocol(proto)
	if err != nil {
		return tenantv1alpha1.LoadBalancerPort{}, err
	}
	port := tenantv1alpha1.LoadBalancerPort{Port: int32(p), Protocol: protocol}
	if hasTarget {
		port.TargetPort = intstr.Parse(target)
	}
	return port, nil
}
