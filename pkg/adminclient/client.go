// Package adminclient reads admin.tenant.io, the provider's views of every
// tenant's Namespaces, Networks, FloatingIPs, LoadBalancers and
// HostClaims, into tenant.io's v1alpha1 types. The views are read-only:
// get, list, watch.
package adminclient

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
)

func init() {
	admin.AddVersionedToScheme(scheme)
	utilruntime.Must(metav1.AddMetaToScheme(scheme))
}

// Client reads the admin views.
type Client struct {
	rest rest.Interface
}

// NewForConfig returns a client of admin.tenant.io/v1alpha1 with c's
// credentials and limits.
func NewForConfig(c *rest.Config) (*Client, error) {
	h, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, err
	}
	return NewForConfigAndClient(c, h)
}

// NewForConfigAndClient is NewForConfig sending through h.
func NewForConfigAndClient(c *rest.Config, h *http.Client) (*Client, error) {
	cfg := rest.CopyConfig(c)
	cfg.GroupVersion = &admin.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = codecs.WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	client, err := rest.RESTClientForConfigAndClient(cfg, h)
	if err != nil {
		return nil, err
	}
	return &Client{rest: client}, nil
}

// Namespaces reads every tenant's Namespaces, named "<tenant>.<name>".
func (c *Client) Namespaces() *Reader[*tenantv1alpha1.Namespace, *tenantv1alpha1.NamespaceList] {
	return newReader[tenantv1alpha1.Namespace, tenantv1alpha1.NamespaceList](c, "namespaces", "")
}

// Networks reads every tenant's Networks, named "<tenant>.<name>".
func (c *Client) Networks() *Reader[*tenantv1alpha1.Network, *tenantv1alpha1.NetworkList] {
	return newReader[tenantv1alpha1.Network, tenantv1alpha1.NetworkList](c, "networks", "")
}

// FloatingIPs reads the FloatingIPs of namespace "<tenant>.<namespace>",
// or of every tenant's namespaces ("").
func (c *Client) FloatingIPs(namespace string) *Reader[*tenantv1alpha1.FloatingIP, *tenantv1alpha1.FloatingIPList] {
	return newReader[tenantv1alpha1.FloatingIP, tenantv1alpha1.FloatingIPList](c, "floatingips", namespace)
}

// LoadBalancers reads the LoadBalancers of namespace "<tenant>.<namespace>",
// or of every tenant's namespaces ("").
func (c *Client) LoadBalancers(namespace string) *Reader[*tenantv1alpha1.LoadBalancer, *tenantv1alpha1.LoadBalancerList] {
	return newReader[tenantv1alpha1.LoadBalancer, tenantv1alpha1.LoadBalancerList](c, "loadbalancers", namespace)
}

// HostClaims reads the HostClaims of namespace "<tenant>.<namespace>", or
// of every tenant's namespaces ("").
func (c *Client) HostClaims(namespace string) *Reader[*tenantv1alpha1.HostClaim, *tenantv1alpha1.HostClaimList] {
	return newReader[tenantv1alpha1.HostClaim, tenantv1alpha1.HostClaimList](c, "hostclaims", namespace)
}

// Reader reads one view: T is its object type, L its list type.
type Reader[T, L runtime.Object] struct {
	client              *Client
	resource, namespace string
	newObject           func() T
	newList             func() L
}

func newReader[O, LO any, T interface {
	*O
	runtime.Object
}, L interface {
	*LO
	runtime.Object
}](c *Client, resource, namespace string) *Reader[T, L] {
	return &Reader[T, L]{client: c, resource: resource, namespace: namespace,
		newObject: func() T { return T(new(O)) }, newList: func() L { return L(new(LO)) }}
}

func (r *Reader[T, L]) request(verb string) *rest.Request {
	return r.client.rest.Verb(verb).NamespaceIfScoped(r.namespace, r.namespace != "").Resource(r.resource)
}

// Get reads one object.
func (r *Reader[T, L]) Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error) {
	out := r.newObject()
	err := r.request("GET").Name(name).VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(out)
	return out, err
}

// List lists the view.
func (r *Reader[T, L]) List(ctx context.Context, opts metav1.ListOptions) (L, error) {
	out := r.newList()
	req := r.request("GET").VersionedParams(&opts, metav1.ParameterCodec)
	if opts.TimeoutSeconds != nil {
		req = req.Timeout(time.Duration(*opts.TimeoutSeconds) * time.Second)
	}
	err := req.Do(ctx).Into(out)
	return out, err
}

// Watch watches the view.
func (r *Reader[T, L]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	req := r.request("GET").VersionedParams(&opts, metav1.ParameterCodec)
	if opts.TimeoutSeconds != nil {
		req = req.Timeout(time.Duration(*opts.TimeoutSeconds) * time.Second)
	}
	return req.Watch(ctx)
}
