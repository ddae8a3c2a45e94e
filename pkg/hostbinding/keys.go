package hostbinding

import (
	"net/url"

	"k8s.io/apimachinery/pkg/types"
)

const (
	hostsDir   = "/hosts/"
	claimsDir  = "/claims/"
	tenantsDir = "/tenants/"
)

func (l *Ledger) hostKey(h Host) string {
	return l.prefix + hostsDir + url.PathEscape(h.Namespace) + "/" + url.PathEscape(h.Name)
}

func (l *Ledger) claimKey(uid types.UID) string {
	return l.prefix + claimsDir + url.PathEscape(string(uid))
}

// tenantDir holds one empty key per claim of tenantUID that holds a host.
func (l *Ledger) tenantDir(tenantUID types.UID) string {
	return l.prefix + tenantsDir + url.PathEscape(string(tenantUID)) + "/"
}

func (l *Ledger) indexKey(c Claim) string {
	return l.tenantDir(c.TenantUID) + url.PathEscape(string(c.UID))
}
