package hostbinding

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Host is a bare-metal server: a BareMetalHost in a provider namespace. Its
// namespace and name are the server's identity in the ledger.
type Host struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// String returns the host as namespace/name.
func (h Host) String() string { return h.Namespace + "/" + h.Name }

func (h Host) validate() error {
	if h.Namespace == "" || h.Name == "" {
		return fmt.Errorf("%w: host %q needs a namespace and a name", ErrInvalid, h.String())
	}
	return nil
}

// Claim is a tenant's HostClaim, as much of it as a binding records. UID
// identifies it; the names are there for people and for the syncer.
type Claim struct {
	TenantUID types.UID `json:"tenantUID"`
	Tenant    string    `json:"tenant"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	UID       types.UID `json:"uid"`
	// Class is the server class the claim asked for; it may be empty.
	Class string `json:"class,omitempty"`
}

func (c Claim) validate() error {
	var missing []error
	for _, f := range []struct{ name, value string }{
		{"tenant UID", string(c.TenantUID)},
		{"tenant", c.Tenant},
		{"namespace", c.Namespace},
		{"name", c.Name},
		{"UID", string(c.UID)},
	} {
		if f.value == "" {
			missing = append(missing, errors.New("empty "+f.name))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: claim %s/%s: %w", ErrInvalid, c.Namespace, c.Name, errors.Join(missing...))
	}
	return nil
}

// Binding is one claim holding one host since a moment. It is the value of
// both the host's and the claim's key.
type Binding struct {
	Host  Host      `json:"host"`
	Claim Claim     `json:"claim"`
	Since time.Time `json:"since"`
}

// same says whether b and o are the same binding, whatever the location of
// their times.
func (b Binding) same(o Binding) bool {
	return b.Host == o.Host && b.Claim == o.Claim && b.Since.Equal(o.Since)
}

func (b Binding) validate() error {
	return errors.Join(b.Host.validate(), b.Claim.validate())
}

var (
	// ErrInvalid is wrapped by the errors about arguments the ledger
	// refuses: empty names or UIDs.
	ErrInvalid = errors.New("invalid")
	// ErrHostTaken means the host is bound to another claim. The error
	// does not say which: it may be shown to the tenant whose claim lost.
	ErrHostTaken = errors.New("host is already bound to another claim")
	// ErrNoHost means every candidate of BindFirstFree was bound to another
	// claim at one moment.
	ErrNoHost = errors.New("no free host among the candidates")
	// ErrContention means a call gave up after losing too many races
	// against other binds and releases; trying again later may succeed.
	ErrContention = errors.New("too much contention for hosts")
	// ErrInconsistent means etcd holds part of a binding, which the
	// ledger's transactions never write: someone else wrote under its prefix.
	ErrInconsistent = errors.New("ledger keys disagree")
)
