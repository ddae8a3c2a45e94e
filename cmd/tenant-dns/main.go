// Command tenant-dns is the provider's DNS server for tenants: CoreDNS with
// the tenantdns plugin, which answers each tenant's pods with that
// tenant's names only (see pkg/tenantdns), and the few CoreDNS plugins
// such a server needs around it. The plugins run in the order of
// directives, not of the Corefile: cache comes after tenantdns, so it
// never holds an answer of one tenant's view for another's sender.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/any"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/bufsize"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/cancel"
	_ "github.com/coredns/coredns/plugin/debug"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/pprof"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/timeouts"

	_ "tenant.io/tenant-apiserver/pkg/tenantdns"
)

// directives are the plugins this server knows, in the order a query goes
// through them. kubernetes is there to serve the host's own names beside
// the tenants' (for a zone of its own: after tenantdns in one zone it
// would answer what tenantdns hides).
var directives = []string{
	"cancel", "timeouts", "reload", "bufsize", "bind", "debug",
	"ready", "health", "pprof", "prometheus", "errors", "log",
	"any", "loadbalance",
	"tenantdns",
	"cache", "kubernetes", "loop", "forward",
}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
