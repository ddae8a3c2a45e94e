package plugin

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"tenant.io/tenant-apiserver/pkg/tenantview"
)

func newRoutesCommand(o *Options) *cobra.Command {
	cmd := newListCommand(o, "routes", "Your HTTP routes on the provider's gateway: hostnames, whether the gateway accepted them, backends", false,
		func(ctx context.Context, _ bool) (*listing, error) {
			sc, err := o.scope(ctx)
			if err != nil {
				return nil, err
			}
			routes, err := tenantview.TenantRoutes(ctx, sc.api, sc.dynamic, o.onlyNamespace())
			if err != nil {
				return nil, err
			}
			if len(routes) == 0 && o.Output == "" {
				domain := ""
				if sc.tnt != nil {
					domain = sc.tnt.Status.RouteDomain
				}
				fmt.Fprint(o.ErrOut, publishHint(domain))
			}
			return routesListing(routes, o), nil
		})
	cmd.Aliases = []string{"route"}
	cmd.Long = `Lists the Gateway API HTTPRoutes and GRPCRoutes of your namespaces (-n NAME:
of namespace NAME only) with their hostnames, whether the provider's
gateway accepted them (True; False and its reason; Unknown while no
gateway has written the route's status) and the Services they send
requests to. -o json|yaml prints the routes as the host holds them.

To publish an HTTP service, write an HTTPRoute (or a GRPCRoute) in the
host namespace of one of your namespaces: "kubectl tenant ns use dev",
then "kubectl apply -f route.yaml". Its parentRefs name the provider's
Gateway; its hostnames may be your route domain ("Route domain" in
"kubectl tenant info": <tenant>.<the provider's domain>) and any name
below it, a wildcard "*.<route domain>" included, and no other: the host
refuses a route naming another tenant's name, or none. Its backendRefs
name Services of the namespace (a Service of another of your namespaces
needs a ReferenceGrant there). Create, change and delete routes with
kubectl; this command only lists them.`
	cmd.Example = `  kubectl tenant routes
  kubectl tenant routes -n dev -o yaml`
	return cmd
}

// onlyNamespace is the tenant Namespace -n names, "" when -n is not given.
func (o *Options) onlyNamespace() string {
	if o.ConfigFlags.Namespace == nil {
		return ""
	}
	return *o.ConfigFlags.Namespace
}

// routesListing is what routes prints: NAMESPACE is the tenant Namespace.
func routesListing(routes []tenantview.Route, o *Options) *listing {
	l := &listing{headers: []string{"NAMESPACE", "NAME", "KIND", "HOSTNAMES", "ACCEPTED", "BACKENDS"}, wide: []string{"HOST NAMESPACE", "AGE"}}
	for _, r := range routes {
		gk := r.Object.GroupVersionKind().GroupKind()
		l.add(r.Object, strings.ToLower(gk.Kind)+"."+gk.Group+"/"+r.Name,
			[]string{r.Namespace, r.Name, r.Kind, strings.Join(r.Hostnames, ","), r.Accepted, strings.Join(r.Backends, ",")},
			r.HostNamespace, age(o.Now(), r.Object.GetCreationTimestamp()))
	}
	return l
}

// publishHint says how to publish a route, with the tenant's domain; the
// empty list's "No resources found." follows it.
func publishHint(domain string) string {
	if domain == "" {
		return "Your provider offers your tenant no route domain (kubectl tenant info): routes cannot be published.\n"
	}
	return fmt.Sprintf("Publish one with an HTTPRoute in the host namespace of one of your namespaces (kubectl tenant ns use NAME), "+
		"naming %s or names below it (*.%s); kubectl tenant routes --help says more.\n", domain, domain)
}
