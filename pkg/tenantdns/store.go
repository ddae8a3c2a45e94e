package tenantdns

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
)

// Store holds what the plugin answers from: the objects of seven informers,
// each cut down by its transform to the fields a lookup reads, and
// indexed by what queries ask for. A Store is filled by informers
// (Informers) or, in tests and benchmarks, directly.
type Store struct {
	Networks   cache.Indexer   // *unstructured.Unstructured: tenants' ClusterUserDefinedNetworks, their subnets
	Namespaces cache.Indexer   // *corev1.Namespace: tenant, namespace and isolation labels
	Services   cache.Indexer   // *corev1.Service: addresses, ports, aliases
	Pods       cache.Indexer   // *corev1.Pod: addresses
	Slices     cache.Indexer   // *discoveryv1.EndpointSlice: headless Services' endpoints
	Public     []cache.Indexer // *unstructured.Unstructured: FloatingIPs, LoadBalancers of admin.tenant.io

	// lengths has bit n set once a network subnet of prefix length n was
	// indexed: a source's tenant is looked up at those lengths only.
	lengths atomic.Uint64
}

// Index names.
const (
	byBlock      = "block"       // Networks: each subnet
	byTenantName = "tenant-name" // Namespaces: "<tenant>/<tenant namespace name>"
	byHard       = "hard"        // Namespaces: the tenant, when Hard
	byIP         = "ip"          // Services (cluster IPs), Pods
	byAlias      = "alias"       // Services: "<tenant>|<service>.<namespace>" of provider service aliases
	byService    = "service"     // EndpointSlices: "<namespace>/<service>"
	byDNSName    = "dns-name"    // Public: status.dnsName
)

// NewStore returns an empty Store with its indexes.
func NewStore() *Store {
	key := cache.DeletionHandlingMetaNamespaceKeyFunc
	s := &Store{}
	s.Networks = cache.NewIndexer(key, s.Indexers(KindNetworks))
	s.Namespaces = cache.NewIndexer(key, s.Indexers(KindNamespaces))
	s.Services = cache.NewIndexer(key, s.Indexers(KindServices))
	s.Pods = cache.NewIndexer(key, s.Indexers(KindPods))
	s.Slices = cache.NewIndexer(key, s.Indexers(KindSlices))
	s.Public = []cache.Indexer{cache.NewIndexer(key, s.Indexers(KindPublic))}
	return s
}

// Kind names one of the Store's informers.
type Kind int

// The Store's kinds.
const (
	KindNetworks Kind = iota
	KindNamespaces
	KindServices
	KindPods
	KindSlices
	KindPublic
)

// Indexers are the indexes of kind k's store in s.
func (st *Store) Indexers(k Kind) cache.Indexers {
	switch k {
	case KindNetworks:
		return cache.Indexers{byBlock: func(obj interface{}) ([]string, error) {
			u := obj.(*unstructured.Unstructured)
			subnets, _, _ := unstructured.NestedStringSlice(u.Object, "subnets")
			var out []string
			for _, s := range subnets {
				if p, err := netip.ParsePrefix(s); err == nil && p.Addr().Is4() {
					out = append(out, p.Masked().String())
					st.lengths.Or(1 << p.Bits())
				}
			}
			return out, nil
		}}
	case KindNamespaces:
		return cache.Indexers{
			byTenantName: func(obj interface{}) ([]string, error) {
				ns := obj.(*corev1.Namespace)
				t, n := ns.Labels[hostnames.TenantLabel], ns.Labels[hostnames.NamespaceLabel]
				if t == "" || n == "" {
					return nil, nil
				}
				return []string{t + "/" + n}, nil
			},
			byHard: func(obj interface{}) ([]string, error) {
				ns := obj.(*corev1.Namespace)
				if t := ns.Labels[hostnames.TenantLabel]; t != "" && isHard(ns) {
					return []string{t}, nil
				}
				return nil, nil
			},
		}
	case KindServices:
		return cache.Indexers{
			byIP: func(obj interface{}) ([]string, error) {
				svc := obj.(*corev1.Service)
				var ips []string
				for _, ip := range svc.Spec.ClusterIPs {
					if a, err := netip.ParseAddr(ip); err == nil {
						ips = append(ips, a.String())
					}
				}
				return ips, nil
			},
			byAlias: func(obj interface{}) ([]string, error) {
				svc := obj.(*corev1.Service)
				t := svc.Labels[hostnames.TenantLabel]
				if svc.Spec.Type != corev1.ServiceTypeExternalName || t == "" || svc.Labels[hostnames.ProviderServiceLabel] == "" {
					return nil, nil
				}
				// <service>.<namespace>.svc.<domain>: the provider
				// Service the alias names.
				labels := strings.SplitN(strings.ToLower(strings.TrimSuffix(svc.Spec.ExternalName, ".")), ".", 4)
				if len(labels) < 4 || labels[2] != "svc" {
					return nil, nil
				}
				return []string{t + "|" + labels[0] + "." + labels[1]}, nil
			},
		}
	case KindPods:
		return cache.Indexers{byIP: func(obj interface{}) ([]string, error) {
			pod := obj.(*corev1.Pod)
			ips := make([]string, 0, len(pod.Status.PodIPs))
			for _, ip := range pod.Status.PodIPs {
				if a, err := netip.ParseAddr(ip.IP); err == nil {
					ips = append(ips, a.String())
				}
			}
			return ips, nil
		}}
	case KindSlices:
		return cache.Indexers{byService: func(obj interface{}) ([]string, error) {
			s := obj.(*discoveryv1.EndpointSlice)
			svc := s.Labels[discoveryv1.LabelServiceName]
			if svc == "" {
				return nil, nil
			}
			return []string{s.Namespace + "/" + svc}, nil
		}}
	case KindPublic:
		return cache.Indexers{byDNSName: func(obj interface{}) ([]string, error) {
			u := obj.(*unstructured.Unstructured)
			name, _, _ := unstructured.NestedString(u.Object, "status", "dnsName")
			if name == "" {
				return nil, nil
			}
			// The name, and each name above it, which exists (without
			// records) because this one does.
			name = canonical(name)
			keys := []string{name}
			for off, end := dns.NextLabel(name, 0); !end; off, end = dns.NextLabel(name, off) {
				keys = append(keys, entKey(name[off:]))
			}
			return keys, nil
		}}
	}
	panic(fmt.Sprintf("tenantdns: unknown kind %d", k))
}

// Transform cuts an object of kind k down to what the plugin reads: an
// informer holds every Pod and Service of the cluster, so a kept field
// costs that many times over.
func Transform(k Kind) cache.TransformFunc {
	return func(obj interface{}) (interface{}, error) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			return d, nil
		}
		switch k {
		case KindNetworks:
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return obj, nil
			}
			// A tenant's ClusterUserDefinedNetwork: its tenant and its
			// subnets (Layer2: strings; Layer3: objects with a cidr).
			out := &unstructured.Unstructured{Object: map[string]interface{}{}}
			out.SetName(u.GetName())
			out.SetResourceVersion(u.GetResourceVersion())
			out.SetLabels(map[string]string{hostnames.TenantLabel: u.GetLabels()[hostnames.TenantLabel]})
			var subnets []interface{}
			for _, topo := range []string{"layer2", "layer3"} {
				list, _, _ := unstructured.NestedSlice(u.Object, "spec", "network", topo, "subnets")
				for _, s := range list {
					switch v := s.(type) {
					case string:
						subnets = append(subnets, v)
					case map[string]interface{}:
						if c, ok := v["cidr"].(string); ok {
							subnets = append(subnets, c)
						}
					}
				}
			}
			out.Object["subnets"] = subnets
			return out, nil
		case KindNamespaces:
			ns, ok := obj.(*corev1.Namespace)
			if !ok {
				return obj, nil
			}
			return &corev1.Namespace{ObjectMeta: slim(ns.ObjectMeta, ns.Labels, hostnames.TenantLabel, hostnames.NamespaceLabel, hostnames.IsolationLabel)}, nil
		case KindServices:
			svc, ok := obj.(*corev1.Service)
			if !ok {
				return obj, nil
			}
			out := &corev1.Service{ObjectMeta: slim(svc.ObjectMeta, svc.Labels, hostnames.TenantLabel, hostnames.ProviderServiceLabel)}
			out.Spec.Type = svc.Spec.Type
			out.Spec.ClusterIPs = svc.Spec.ClusterIPs
			out.Spec.ExternalName = svc.Spec.ExternalName
			out.Spec.Ports = make([]corev1.ServicePort, len(svc.Spec.Ports))
			for i, p := range svc.Spec.Ports {
				out.Spec.Ports[i] = corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, Port: p.Port}
			}
			return out, nil
		case KindPods:
			pod, ok := obj.(*corev1.Pod)
			if !ok {
				return obj, nil
			}
			out := &corev1.Pod{ObjectMeta: slim(pod.ObjectMeta, nil)}
			out.Status.PodIPs = podAddresses(pod)
			return out, nil
		case KindSlices:
			s, ok := obj.(*discoveryv1.EndpointSlice)
			if !ok {
				return obj, nil
			}
			out := &discoveryv1.EndpointSlice{ObjectMeta: slim(s.ObjectMeta, s.Labels, discoveryv1.LabelServiceName), AddressType: s.AddressType, Ports: s.Ports}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && !*e.Conditions.Ready {
					continue
				}
				out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{Addresses: e.Addresses})
			}
			return out, nil
		case KindPublic:
			u, ok := obj.(*unstructured.Unstructured)
			if !ok {
				return obj, nil
			}
			out := &unstructured.Unstructured{Object: map[string]interface{}{}}
			out.SetName(u.GetName())
			out.SetNamespace(u.GetNamespace())
			out.SetResourceVersion(u.GetResourceVersion())
			for _, f := range []string{"dnsName", "address"} {
				if v, _, _ := unstructured.NestedString(u.Object, "status", f); v != "" {
					_ = unstructured.SetNestedField(out.Object, v, "status", f)
				}
			}
			return out, nil
		}
		return obj, nil
	}
}

// slim keeps an object's name, namespace and resource version, and the
// labels named.
func slim(m metav1.ObjectMeta, labels map[string]string, keep ...string) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion}
	for _, k := range keep {
		if v, ok := labels[k]; ok {
			if out.Labels == nil {
				out.Labels = make(map[string]string, len(keep))
			}
			out.Labels[k] = v
		}
	}
	return out
}

// ovnPodNetworksAnnotation is where OVN-Kubernetes writes a pod's
// addresses on each of its networks.
const ovnPodNetworksAnnotation = "k8s.ovn.org/pod-networks"

// podAddresses are the addresses pod sends from: those kubelet reports,
// and its addresses on its primary user-defined network, which
// OVN-Kubernetes writes in its pod-networks annotation (kubelet reports
// the default network's only).
func podAddresses(pod *corev1.Pod) []corev1.PodIP {
	out := append([]corev1.PodIP(nil), pod.Status.PodIPs...)
	raw := pod.Annotations[ovnPodNetworksAnnotation]
	if raw == "" {
		return out
	}
	var nets map[string]struct {
		IPAddresses []string `json:"ip_addresses"`
		Role        string   `json:"role"`
	}
	if json.Unmarshal([]byte(raw), &nets) != nil {
		return out
	}
	for _, n := range nets {
		if n.Role != "primary" {
			continue
		}
		for _, cidr := range n.IPAddresses {
			if p, err := netip.ParsePrefix(cidr); err == nil && !hasIP(out, p.Addr().String()) {
				out = append(out, corev1.PodIP{IP: p.Addr().String()})
			}
		}
	}
	return out
}

func hasIP(ips []corev1.PodIP, ip string) bool {
	for _, p := range ips {
		if p.IP == ip {
			return true
		}
	}
	return false
}

// isHard says whether host namespace ns is a Hard tenant's.
func isHard(ns *corev1.Namespace) bool {
	return ns.Labels[hostnames.IsolationLabel] == string(v1alpha1.TenantIsolationHard)
}

// canonical is a DNS name in lower case with its trailing dot.
func canonical(name string) string {
	name = strings.ToLower(name)
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}
