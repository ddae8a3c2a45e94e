package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"tenant.io/tenant-apiserver/pkg/adminclient"
	"tenant.io/tenant-apiserver/pkg/apis/admin"
	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	tenantclient "tenant.io/tenant-apiserver/pkg/generated/clientset/versioned/typed/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/hostnames"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

// The provider pages' kinds. The API decides who may read them: a tenant
// member listing AddressPools gets the API's 403, and sees only its own
// Tenant.
var (
	tenantsKind = &kind{
		Resource: "tenants", Title: "Tenants", Singular: "Tenant", Provider: true,
		Headers: []string{"Name", "Phase", "Block", "Public IPs", "Namespaces", "Networks", "Floating IPs", "Load balancers", "Hosts", "Members"},
		Empty:   "No tenants.",
		rows: func(obj runtime.Object) []row {
			t := obj.(*tenantv1alpha1.Tenant)
			block := ""
			if t.Status.Network != nil {
				block = t.Status.Network.CIDR
			}
			u, q := t.Status.Usage, t.Spec.Quota
			members := append(append([]string{}, t.Spec.Members.Users...), prefixedAll("group ", t.Spec.Members.Groups)...)
			return []row{{Key: t.Name, Name: t.Name, Link: "/admin/tenants/" + url.PathEscape(t.Name), Cells: []string{
				t.Name, string(t.Status.Phase), block, fmt.Sprintf("%d/%d", u.PublicIPs, len(t.Status.PublicIPs)),
				usedOf(u.Namespaces, q.Namespaces), usedOf(u.Networks, q.Networks), usedOf(u.FloatingIPs, q.FloatingIPs), usedOf(u.LoadBalancers, q.LoadBalancers),
				usedOf(u.HostClaims, q.HostClaims), strings.Join(members, ", "),
			}}}
		},
	}
	poolsKind = &kind{
		Resource: "addresspools", Title: "Address pools", Singular: "AddressPool", Provider: true, HasMeter: true,
		Headers: []string{"Name", "Purpose", "Ranges", "Capacity", "Allocated", "Free"},
		Empty:   "No address pools.",
		rows: func(obj runtime.Object) []row {
			p := obj.(*tenantv1alpha1.AddressPool)
			st := p.Status
			r := row{Key: p.Name, Name: p.Name, Cells: []string{p.Name, string(p.Spec.Purpose), strings.Join(append(append([]string{}, p.Spec.CIDRs...), p.Spec.Ranges...), ", "),
				strconv.FormatInt(st.Capacity, 10), strconv.FormatInt(st.Allocated, 10), strconv.FormatInt(st.Free, 10)}}
			if st.Capacity > 0 {
				r.Meter = &meter{Value: float64(st.Allocated), Max: float64(st.Capacity), Label: fmt.Sprintf("%d of %d allocated", st.Allocated, st.Capacity)}
			}
			return []row{r}
		},
	}
	// tenantProgressKind is one Tenant's phase and conditions, a row each:
	// the onboarding progress (/live/tenant?name=...).
	tenantProgressKind = &kind{
		Resource: "tenant", Title: "Progress", Singular: "Tenant", Provider: true,
		Headers: []string{"Condition", "Status", "Reason", "Message"},
		Empty:   "The tenant does not exist.",
		rows: func(obj runtime.Object) []row {
			t := obj.(*tenantv1alpha1.Tenant)
			rows := []row{{Key: "0", Name: "Phase", Cells: []string{"Phase", string(t.Status.Phase), "", ""}}}
			for i, c := range t.Status.Conditions {
				rows = append(rows, row{Key: fmt.Sprintf("1-%03d", i), Name: c.Type, Cells: []string{c.Type, string(c.Status), c.Reason, c.Message}})
			}
			return rows
		},
	}
)

func init() {
	tenants := func(api tenantclient.TenantV1alpha1Interface) reader[*tenantv1alpha1.TenantList] {
		return api.Tenants()
	}
	readsFrom(tenantsKind, tenants)
	readsFrom(tenantProgressKind, tenants)
	readsFrom(poolsKind, func(api tenantclient.TenantV1alpha1Interface) reader[*tenantv1alpha1.AddressPoolList] {
		return api.AddressPools()
	})
}

func prefixedAll(p string, in []string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		out = append(out, p+s)
	}
	return out
}

func usedOf(n int32, limit *int32) string {
	if limit == nil {
		return strconv.Itoa(int(n))
	}
	return fmt.Sprintf("%d/%d", n, *limit)
}

// adminTenantsData is the provider's tenants page and onboarding form.
type adminTenantsData struct {
	Table *tableData
	Pools []tenantv1alpha1.AddressPool
}

func (s *Server) adminTenants(w http.ResponseWriter, r *http.Request) {
	s.renderAdminTenants(w, r, http.StatusOK, nil, nil)
}

func (s *Server) renderAdminTenants(w http.ResponseWriter, r *http.Request, status int, apiErr *apiError, form url.Values) {
	c := callerFrom(r)
	ctx := r.Context()
	pools, err := c.api.AddressPools().List(ctx, metav1.ListOptions{})
	if err != nil {
		if apiErr != nil { // the refusal of the form is what the user asked about
			s.render(w, r, apiErr.Code, "error", &page{Title: http.StatusText(apiErr.Code), Error: apiErr})
			return
		}
		s.renderError(w, r, c, err)
		return
	}
	tenants, err := table(ctx, c, tenantsKind, metav1.ListOptions{}, "/live/tenants")
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d := &adminTenantsData{Table: tenants, Pools: pools.Items}
	s.render(w, r, status, "admin-tenants", &page{Title: "Tenants", Nav: "admin-tenants", Error: apiErr, Form: formValues(form), Data: d})
}

// onboardFields maps the Tenant's field paths to the onboarding form's.
var onboardFields = map[string]string{
	"metadata.name": "name", "spec.displayName": "displayName", "spec.members.users": "users", "spec.members.groups": "groups",
	"spec.network.cidr": "cidr", "spec.network.prefixLength": "prefixLength", "spec.network": "cidr", "spec.publicIPs": "publicIPs",
	"spec.quota": "quota", "spec.podSecurity": "podSecurity", "spec.isolation": "isolation",
}

// quotaFormFields are the onboarding form's quota inputs, by quota key.
var quotaFormFields = []string{"namespaces", "networks", "floatingips", "loadbalancers", "requests.cpu", "requests.memory"}

// tenantFromForm builds the Tenant the onboarding form describes.
func tenantFromForm(f url.Values) (*tenantv1alpha1.Tenant, *apiError) {
	t := &tenantv1alpha1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: strings.TrimSpace(f.Get("name"))}, Spec: tenantv1alpha1.TenantSpec{
		DisplayName: strings.TrimSpace(f.Get("displayName")),
		Members:     tenantv1alpha1.TenantMembers{Users: splitList(f.Get("users")), Groups: splitList(f.Get("groups"))},
		Network:     tenantv1alpha1.TenantNetwork{CIDR: strings.TrimSpace(f.Get("cidr"))},
		Isolation:   tenantv1alpha1.TenantIsolation(strings.TrimSpace(f.Get("isolation"))),
	}}
	if v := strings.TrimSpace(f.Get("prefixLength")); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, formError("prefixLength", fmt.Sprintf("%q is not a number", v))
		}
		n32 := int32(n)
		t.Spec.Network.PrefixLength = &n32
	}
	if v := strings.TrimSpace(f.Get("publicIPs")); v != "" {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return nil, formError("publicIPs", fmt.Sprintf("%q is not a number", v))
		}
		t.Spec.PublicIPs.Count = int32(n)
	}
	quota := map[string]string{}
	for _, k := range quotaFormFields {
		if v := strings.TrimSpace(f.Get("quota-" + k)); v != "" {
			quota[k] = v
		}
	}
	q, err := tenantview.ParseQuota(quota)
	if err != nil {
		return nil, formError("quota", err.Error())
	}
	t.Spec.Quota = q
	return t, nil
}

// onboard creates a Tenant and shows its progress.
func (s *Server) onboard(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	t, ferr := tenantFromForm(r.PostForm)
	if ferr != nil {
		s.renderAdminTenants(w, r, ferr.Code, ferr, r.PostForm)
		return
	}
	created, err := c.api.Tenants().Create(r.Context(), t, metav1.CreateOptions{})
	if err != nil {
		ae := asAPIError(err, onboardFields)
		s.renderAdminTenants(w, r, ae.Code, ae, r.PostForm)
		return
	}
	http.Redirect(w, r, "/admin/tenants/"+url.PathEscape(created.Name), http.StatusSeeOther)
}

// adminTenantData is one tenant's page: its onboarding progress, and what
// it holds, read-only.
type adminTenantData struct {
	Tenant *tenantv1alpha1.Tenant
	Table  *tableData
	// Views are the tenant's Namespaces, Networks, FloatingIPs,
	// LoadBalancers and HostClaims; ViewsError why they could not be read.
	Views      []*tableData
	ViewsError *apiError
}

func (s *Server) adminTenant(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	name := r.PathValue("name")
	t, err := c.api.Tenants().Get(r.Context(), name, metav1.GetOptions{})
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d := &adminTenantData{Tenant: t, Table: &tableData{Kind: tenantProgressKind, Rows: sortedRows(tenantProgressKind, []runtime.Object{t}), CSRF: c.CSRF,
		Live: "/live/tenant?name=" + url.QueryEscape(name)}}
	for _, k := range viewKinds {
		td, err := table(r.Context(), c, k, tenantSelector(name), "/live/"+k.Resource+"?tenant="+url.QueryEscape(name))
		if err != nil {
			d.Views, d.ViewsError = nil, newAPIError(err, nil)
			break
		}
		d.Views = append(d.Views, td)
	}
	s.render(w, r, http.StatusOK, "admin-tenant", &page{Title: "Tenant " + name, Nav: "admin-tenants", Data: d})
}

func (s *Server) adminPools(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	pools, err := table(r.Context(), c, poolsKind, metav1.ListOptions{}, "/live/addresspools")
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d := &listData{Kind: poolsKind, Table: pools}
	s.render(w, r, http.StatusOK, "list", &page{Title: "Address pools", Nav: "admin-pools", Data: d})
}

// The provider's read-only views of one tenant's objects, on the tenant's
// page: admin.tenant.io, selected by the tenant's label. Rows show the
// objects as the tenant names them, without links or deletes.
var (
	viewNamespaces = viewOf(namespaces)
	viewNetworks   = viewOf(networks)
	viewFIPs       = viewOf(floatingIPs)
	viewLBs        = viewOf(loadBalancers)
	viewHosts      = viewOf(hostClaims)
	viewKinds      = []*kind{viewNamespaces, viewNetworks, viewFIPs, viewLBs, viewHosts}
)

// viewOf is the provider's view of tenant kind k.
func viewOf(k *kind) *kind {
	v := &kind{Resource: "admin-" + k.Resource, Title: k.Title, Singular: k.Singular, Namespaced: k.Namespaced,
		Headers: k.Headers, Empty: k.Empty, Provider: true, NameColumn: k.NameColumn}
	v.rows = func(obj runtime.Object) []row {
		rows := k.rows(asTenantNames(obj))
		for i := range rows {
			rows[i].Link, rows[i].Delete = "", ""
		}
		return rows
	}
	return v
}

// asTenantNames returns a copy of obj, an object of the admin views, named
// as its tenant names it.
func asTenantNames(obj runtime.Object) runtime.Object {
	obj = obj.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	if _, ns, ok := admin.SplitName(m.GetNamespace()); ok {
		m.SetNamespace(ns)
	} else if _, n, ok := admin.SplitName(m.GetName()); ok {
		m.SetName(n)
	}
	return obj
}

// readsViewFrom sets k's list and watch to a reader of the admin views.
func readsViewFrom[L runtime.Object](k *kind, client func(v *adminclient.Client) reader[L]) {
	k.list = func(ctx context.Context, c *caller, opts metav1.ListOptions) (runtime.Object, error) {
		return client(c.views).List(ctx, opts)
	}
	k.watch = func(ctx context.Context, c *caller, opts metav1.ListOptions) (watch.Interface, error) {
		return client(c.views).Watch(ctx, opts)
	}
}

func init() {
	readsViewFrom(viewNamespaces, func(v *adminclient.Client) reader[*tenantv1alpha1.NamespaceList] { return v.Namespaces() })
	readsViewFrom(viewNetworks, func(v *adminclient.Client) reader[*tenantv1alpha1.NetworkList] { return v.Networks() })
	readsViewFrom(viewFIPs, func(v *adminclient.Client) reader[*tenantv1alpha1.FloatingIPList] { return v.FloatingIPs("") })
	readsViewFrom(viewLBs, func(v *adminclient.Client) reader[*tenantv1alpha1.LoadBalancerList] { return v.LoadBalancers("") })
	readsViewFrom(viewHosts, func(v *adminclient.Client) reader[*tenantv1alpha1.HostClaimList] { return v.HostClaims("") })
}

// tenantSelector selects tenant t's objects in the admin views.
func tenantSelector(t string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: labels.Set{hostnames.TenantLabel: t}.String()}
}
