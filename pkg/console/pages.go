package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	tenantv1alpha1 "tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/tenantview"
)

// Error implements error, so that a form's own refusal travels like the
// API's.
func (e *apiError) Error() string { return e.Message }

func (s *Server) home(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	if c.Provider && c.Tenant == "" {
		http.Redirect(w, r, "/admin/tenants", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/overview", http.StatusSeeOther)
}

// overviewData is the Overview page: what the tenant holds.
type overviewData struct {
	Info   *tenantview.Info
	Quota  []quotaMeter
	Free   int
	Reason string
}

// quotaMeter is a quota line with a bar when it has a limit.
type quotaMeter struct {
	tenantview.QuotaLine
	Meter *meter
}

func quotaMeters(lines []tenantview.QuotaLine) []quotaMeter {
	out := make([]quotaMeter, 0, len(lines))
	for _, l := range lines {
		q := quotaMeter{QuotaLine: l}
		if l.Limit != "" {
			used, err1 := resource.ParseQuantity(l.Used)
			limit, err2 := resource.ParseQuantity(l.Limit)
			if err1 == nil && err2 == nil {
				q.Meter = &meter{Value: used.AsApproximateFloat64(), Max: limit.AsApproximateFloat64(), Label: l.Used + " of " + l.Limit}
			}
		}
		out = append(out, q)
	}
	return out
}

// noTenant says why a tenant page has no tenant to show.
func noTenant(c *caller) string {
	switch {
	case len(c.Tenants) > 1:
		names := make([]string, 0, len(c.Tenants))
		for _, m := range c.Tenants {
			names = append(names, m.Tenant)
		}
		return "You are a member of several tenants (" + strings.Join(names, ", ") + ") and may act in none of them; ask your provider to remove you from all but one."
	case c.Provider:
		return "You are a provider admin and a member of no tenant: the provider pages are yours."
	}
	return "You are not a member of any tenant. Ask your provider to onboard you."
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	if c.Tenant == "" {
		s.render(w, r, http.StatusOK, "overview", &page{Title: "Overview", Nav: "overview", Data: &overviewData{Reason: noTenant(c)}})
		return
	}
	info, err := tenantview.Gather(r.Context(), c.api, c.Tenant)
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d := &overviewData{Info: info, Quota: quotaMeters(info.Quota)}
	for _, p := range info.PublicIPs {
		if p.UsedBy == "" {
			d.Free++
		}
	}
	s.render(w, r, http.StatusOK, "overview", &page{Title: "Overview", Nav: "overview", Data: d})
}

// offboardingData is the Offboarding page.
type offboardingData struct {
	Report *tenantv1alpha1.OffboardingReport
	Reason string
}

func (s *Server) offboarding(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	if c.Tenant == "" {
		s.render(w, r, http.StatusOK, "offboarding", &page{Title: "Offboarding", Nav: "offboarding", Data: &offboardingData{Reason: noTenant(c)}})
		return
	}
	report, err := c.api.Tenants().GetOffboarding(r.Context(), c.Tenant, metav1.GetOptions{})
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	s.render(w, r, http.StatusOK, "offboarding", &page{Title: "Offboarding", Nav: "offboarding", Data: &offboardingData{Report: report}})
}

// listData is a list page: the table, and what its create form offers.
type listData struct {
	Kind  *kind
	Table *tableData
	// Namespaces and Networks are the tenant's, for the form's choices.
	Namespaces []string
	Networks   []string
	// HostClasses are the classes offered to the tenant (the Hosts page).
	HostClasses []hostClassOffer
}

// hostClassOffer is a HostClass as a tenant reads it.
type hostClassOffer struct {
	Name, Labels, Hardware string
	Available              int32
}

// hostClassOffers lists the HostClasses offered to the caller's tenant.
func hostClassOffers(ctx context.Context, c *caller) ([]hostClassOffer, error) {
	list, err := c.api.HostClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]hostClassOffer, 0, len(list.Items))
	for i := range list.Items {
		hc := &list.Items[i]
		out = append(out, hostClassOffer{Name: hc.Name, Labels: tenantview.HostClassLabels(hc), Hardware: string(hc.Spec.Hardware), Available: hc.Status.Available})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// sortedRows are the rows of items, ordered by key.
func sortedRows(k *kind, items []runtime.Object) []row {
	var rows []row
	for _, o := range items {
		rows = append(rows, k.rows(o)...)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Key < rows[j].Key })
	return rows
}

func (s *Server) listPage(k *kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		notice := ""
		q := r.URL.Query()
		if n := q.Get("created"); n != "" {
			notice = k.Singular + " " + n + " created."
		} else if n := q.Get("deleted"); n != "" {
			notice = k.Singular + " " + n + " deleted."
		}
		s.renderList(w, r, k, http.StatusOK, nil, nil, notice)
	}
}

// renderList shows a list page, with the refusal of what the user just did
// when there is one.
func (s *Server) renderList(w http.ResponseWriter, r *http.Request, k *kind, status int, apiErr *apiError, form url.Values, notice string) {
	c := callerFrom(r)
	ctx := r.Context()
	objects, err := table(ctx, c, k, metav1.ListOptions{}, "/live/"+k.Resource)
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d := &listData{Kind: k, Table: objects}
	if k.Namespaced {
		if d.Namespaces, err = s.namespaceNames(ctx, c); err != nil {
			s.renderError(w, r, c, err)
			return
		}
	}
	if k == namespaces {
		nets, err := c.api.Networks().List(ctx, metav1.ListOptions{})
		if err != nil {
			s.renderError(w, r, c, err)
			return
		}
		for _, n := range nets.Items {
			d.Networks = append(d.Networks, n.Name)
		}
	}
	if k == hostClaims && c.Tenant != "" {
		if d.HostClasses, err = hostClassOffers(ctx, c); err != nil {
			s.renderError(w, r, c, err)
			return
		}
	}
	p := &page{Title: k.Title, Nav: k.Resource, Error: apiErr, Form: formValues(form), Notice: notice, Data: d}
	if c.Tenant == "" {
		p.Notice = noTenant(c)
	}
	s.render(w, r, status, "list", p)
}

func (s *Server) namespaceNames(ctx context.Context, c *caller) ([]string, error) {
	nss, err := c.api.Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(nss.Items))
	for _, n := range nss.Items {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out, nil
}

// asAPIError is err as the page shows it, its field paths mapped by fields.
func asAPIError(err error, fields map[string]string) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return newAPIError(err, fields)
}

func (s *Server) createObject(k *kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := callerFrom(r)
		name, err := k.create(r.Context(), c.api, r.PostForm)
		if err != nil {
			ae := asAPIError(err, k.fields)
			s.renderList(w, r, k, ae.Code, ae, r.PostForm, "")
			return
		}
		http.Redirect(w, r, "/"+k.Resource+"?created="+url.QueryEscape(name), http.StatusSeeOther)
	}
}

func (s *Server) deleteObject(k *kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := callerFrom(r)
		ns, name := r.PathValue("namespace"), r.PathValue("name")
		if err := k.delete(r.Context(), c.api, ns, name); err != nil {
			ae := asAPIError(err, nil)
			ae.Message = "Deleting " + k.Singular + " " + name + ": " + ae.Message
			s.renderList(w, r, k, ae.Code, ae, nil, "")
			return
		}
		if k.Namespaced {
			name = ns + "/" + name
		}
		http.Redirect(w, r, "/"+k.Resource+"?deleted="+url.QueryEscape(name), http.StatusSeeOther)
	}
}

// detailData is an object's page.
type detailData struct {
	Kind       *kind
	Namespace  string
	Name       string
	Link       string
	Conditions []metav1.Condition
	YAML       string
	FloatingIP *tenantv1alpha1.FloatingIP
	// HostClaim is set on a HostClaim's page: its power and reboot buttons.
	HostClaim *hostClaimFacts
	// Public is the public address of a FloatingIP or LoadBalancer and its
	// name in the provider's public DNS zone; nil for other kinds.
	Public *publicAddress
}

// hostClaimFacts are what a HostClaim's page shows of the server.
type hostClaimFacts struct {
	*tenantv1alpha1.HostClaim
	Addresses, Hardware, LastReboot, RebootRequested string
}

// publicAddress is an address as a FloatingIP's or LoadBalancer's status
// holds it.
type publicAddress struct {
	Address, DNSName string
}

func (s *Server) detailPage(k *kind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		notice := ""
		if r.URL.Query().Get("changed") != "" {
			notice = k.Singular + " updated."
		}
		s.renderDetail(w, r, k, http.StatusOK, nil, nil, notice)
	}
}

func (s *Server) renderDetail(w http.ResponseWriter, r *http.Request, k *kind, status int, apiErr *apiError, form url.Values, notice string) {
	c := callerFrom(r)
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	obj, err := k.get(r.Context(), c.api, ns, name)
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	acc.SetManagedFields(nil)
	obj.GetObjectKind().SetGroupVersionKind(tenantv1alpha1.SchemeGroupVersion.WithKind(k.Singular))
	d := &detailData{Kind: k, Namespace: ns, Name: name, Link: k.objectLink(ns, name)}
	if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err == nil {
		if raw, found, _ := unstructured.NestedSlice(u, "status", "conditions"); found {
			b, _ := json.Marshal(raw)
			_ = json.Unmarshal(b, &d.Conditions)
		}
	}
	y, err := yaml.Marshal(obj)
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	d.YAML = string(y)
	switch o := obj.(type) {
	case *tenantv1alpha1.FloatingIP:
		d.FloatingIP = o
		d.Public = &publicAddress{Address: o.Status.Address, DNSName: o.Status.DNSName}
	case *tenantv1alpha1.LoadBalancer:
		d.Public = &publicAddress{Address: o.Status.Address, DNSName: o.Status.DNSName}
	case *tenantv1alpha1.HostClaim:
		f := &hostClaimFacts{HostClaim: o, Hardware: tenantview.HostHardware(o.Status.Hardware)}
		var addrs []string
		for _, a := range o.Status.Addresses {
			addrs = append(addrs, a.Address+" ("+a.Type+")")
		}
		f.Addresses = strings.Join(addrs, ", ")
		if t := o.Status.LastRebootRequest; t != nil {
			f.LastReboot = t.UTC().Format(time.RFC3339)
		}
		if t := o.Spec.RebootRequestedAt; t != nil {
			f.RebootRequested = t.UTC().Format(time.RFC3339)
		}
		d.HostClaim = f
	}
	title := k.Singular + " " + name
	if ns != "" {
		title = k.Singular + " " + ns + "/" + name
	}
	s.render(w, r, status, "detail", &page{Title: title, Nav: k.Resource, Error: apiErr, Form: formValues(form), Notice: notice, Data: d})
}

// attachFloatingIP points a FloatingIP at a pod or VM (and its ports).
func (s *Server) attachFloatingIP(w http.ResponseWriter, r *http.Request) {
	target, ports, ferr := targetFromForm(r.PostForm)
	if ferr == nil && target == nil {
		ferr = formError("target", "name the pod or VM")
	}
	if ferr != nil {
		s.renderDetail(w, r, floatingIPs, ferr.Code, ferr, r.PostForm, "")
		return
	}
	s.patchFloatingIP(w, r, map[string]any{"target": target, "ports": ports})
}

// detachFloatingIP takes a FloatingIP's target away; it keeps its address.
func (s *Server) detachFloatingIP(w http.ResponseWriter, r *http.Request) {
	s.patchFloatingIP(w, r, map[string]any{"target": nil, "ports": nil})
}

// patchFloatingIP merge-patches a FloatingIP's spec.
func (s *Server) patchFloatingIP(w http.ResponseWriter, r *http.Request, spec map[string]any) {
	s.patchSpec(w, r, floatingIPs, spec, map[string]string{"spec.target": "target", "spec.ports": "ports"})
}

// powerHostClaim sets a HostClaim's spec.online from the form's power (on
// or off).
func (s *Server) powerHostClaim(w http.ResponseWriter, r *http.Request) {
	switch r.PostForm.Get("power") {
	case "on":
		s.patchSpec(w, r, hostClaims, map[string]any{"online": true}, nil)
	case "off":
		s.patchSpec(w, r, hostClaims, map[string]any{"online": false}, nil)
	default:
		ferr := formError("power", "must be on or off")
		s.renderDetail(w, r, hostClaims, ferr.Code, ferr, r.PostForm, "")
	}
}

// rebootHostClaim asks for one reboot: spec.rebootRequestedAt, now.
func (s *Server) rebootHostClaim(w http.ResponseWriter, r *http.Request) {
	s.patchSpec(w, r, hostClaims, map[string]any{"rebootRequestedAt": metav1.NewTime(time.Now().Truncate(time.Second))}, nil)
}

// patchSpec merge-patches the spec of the object of k the path names, and
// shows its page again: changed, or with the API's refusal, its field
// paths mapped by fields.
func (s *Server) patchSpec(w http.ResponseWriter, r *http.Request, k *kind, spec map[string]any, fields map[string]string) {
	c := callerFrom(r)
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	if err := k.patch(r.Context(), c.api, ns, name, patch); err != nil {
		ae := asAPIError(err, fields)
		s.renderDetail(w, r, k, ae.Code, ae, r.PostForm, "")
		return
	}
	http.Redirect(w, r, k.objectLink(ns, name)+"?changed=1", http.StatusSeeOther)
}

// routesData is the Routes page: the tenant's route domain and its
// Gateway API routes, read-only (routes are written with kubectl).
type routesData struct {
	Reason      string
	RouteDomain string
	Routes      []tenantview.Route
}

// routesPage is the Routes page: the HTTPRoutes and GRPCRoutes of the host
// namespaces of the caller's tenant, read from the host with the caller's
// credentials.
func (s *Server) routesPage(w http.ResponseWriter, r *http.Request) {
	c := callerFrom(r)
	p := &page{Title: "Routes", Nav: "routes"}
	if c.Tenant == "" {
		p.Data = &routesData{Reason: noTenant(c)}
		s.render(w, r, http.StatusOK, "routes", p)
		return
	}
	t, err := c.api.Tenants().Get(r.Context(), c.Tenant, metav1.GetOptions{})
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	routes, err := tenantview.TenantRoutes(r.Context(), c.api, c.dynamic, "")
	if err != nil {
		s.renderError(w, r, c, err)
		return
	}
	p.Data = &routesData{RouteDomain: t.Status.RouteDomain, Routes: routes}
	s.render(w, r, http.StatusOK, "routes", p)
}
