package hostbinding

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

const (
	// maxAttempts bounds how often Release reads and tries again when the
	// binding changed between its read and its delete.
	maxAttempts = 16
	// maxTxnOps is etcd's default --max-txn-ops, the most operations one
	// transaction may carry; reads of many keys are split into such chunks.
	maxTxnOps = 128
	// defaultPage is how many keys one read of a long range returns.
	defaultPage = 1000
)

// Ledger binds claims to hosts in etcd. Any number of ledgers, in any number
// of processes, may share one etcd and prefix: everything they know is in
// etcd (see the package documentation). A Ledger is safe for concurrent use.
type Ledger struct {
	client *clientv3.Client
	prefix string
	clock  clock.PassiveClock
	page   int64
	// spread is how many of the first free candidates BindFirstFree
	// chooses among: 0 (the first) while its binds win, growing while they
	// lose races to other replicas.
	spread atomic.Int64
	// lostRaces counts binds of BindFirstFree that found their host taken.
	lostRaces atomic.Int64

	mu sync.Mutex
	// inFlight counts, per host, the calls of BindFirstFree in this ledger
	// that are binding it now. It is a hint: etcd decides.
	inFlight map[Host]int
}

// Option configures a Ledger.
type Option func(*Ledger)

// WithClock sets the clock that stamps Binding.Since.
func WithClock(c clock.PassiveClock) Option { return func(l *Ledger) { l.clock = c } }

// New returns a ledger that keeps its keys under prefix in the etcd of
// client. It starts nothing; the caller keeps ownership of client.
func New(client *clientv3.Client, prefix string, opts ...Option) *Ledger {
	l := &Ledger{
		client:   client,
		prefix:   strings.TrimSuffix(prefix, "/"),
		clock:    clock.RealClock{},
		page:     defaultPage,
		inFlight: map[Host]int{},
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Bind binds claim to host in one etcd transaction and returns the binding.
// If the claim already holds a host, this one or another, Bind returns that
// binding and no error, so a caller whose earlier Bind failed or crashed may
// simply bind again. If the host is another claim's, the error wraps
// ErrHostTaken. An error of any other kind (a lost connection, an ended
// context) leaves either the whole binding or nothing, and binding again
// tells which.
func (l *Ledger) Bind(ctx context.Context, claim Claim, host Host) (Binding, error) {
	if err := claim.validate(); err != nil {
		return Binding{}, err
	}
	if err := host.validate(); err != nil {
		return Binding{}, err
	}
	b := Binding{Host: host, Claim: claim, Since: l.clock.Now().UTC()}
	value, err := json.Marshal(b)
	if err != nil {
		return Binding{}, fmt.Errorf("encoding binding of %s/%s: %w", claim.Namespace, claim.Name, err)
	}
	hostKey, claimKey := l.hostKey(host), l.claimKey(claim.UID)
	resp, err := l.client.Txn(ctx).If(
		clientv3.Compare(clientv3.CreateRevision(hostKey), "=", 0),
		clientv3.Compare(clientv3.CreateRevision(claimKey), "=", 0),
	).Then(
		clientv3.OpPut(hostKey, string(value)),
		clientv3.OpPut(claimKey, string(value)),
		clientv3.OpPut(l.indexKey(claim), ""),
	).Else(
		clientv3.OpGet(claimKey),
		clientv3.OpGet(hostKey),
	).Commit()
	if err != nil {
		return Binding{}, fmt.Errorf("binding %s/%s to %s: %w", claim.Namespace, claim.Name, host, err)
	}
	if resp.Succeeded {
		return b, nil
	}
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		held, err := decode(kvs[0])
		if err != nil {
			return Binding{}, err
		}
		if held.Claim.TenantUID != claim.TenantUID {
			// Not the caller's to see: claim UIDs are unique, so this is
			// a caller passing someone else's UID.
			return Binding{}, fmt.Errorf("%w: claim UID %s is bound for another tenant", ErrInvalid, claim.UID)
		}
		return held, nil
	}
	if len(resp.Responses[1].GetResponseRange().Kvs) > 0 {
		return Binding{}, fmt.Errorf("binding %s/%s to %s: %w", claim.Namespace, claim.Name, host, ErrHostTaken)
	}
	// The compares and the reads saw the same revision.
	return Binding{}, fmt.Errorf("%w: binding %s failed, yet neither host nor claim is bound", ErrInconsistent, host)
}

// ByClaim returns the binding of the claim with UID claimUID, and whether
// there is one.
func (l *Ledger) ByClaim(ctx context.Context, claimUID types.UID) (Binding, bool, error) {
	if claimUID == "" {
		return Binding{}, false, fmt.Errorf("%w: empty claim UID", ErrInvalid)
	}
	return l.get(ctx, l.claimKey(claimUID))
}

// ByHost returns the binding of host, and whether there is one.
func (l *Ledger) ByHost(ctx context.Context, host Host) (Binding, bool, error) {
	if err := host.validate(); err != nil {
		return Binding{}, false, err
	}
	return l.get(ctx, l.hostKey(host))
}

func (l *Ledger) get(ctx context.Context, key string) (Binding, bool, error) {
	resp, err := l.client.Get(ctx, key)
	if err != nil {
		return Binding{}, false, err
	}
	if len(resp.Kvs) == 0 {
		return Binding{}, false, nil
	}
	b, err := decode(resp.Kvs[0])
	return b, err == nil, err
}

// Release deletes binding b, in one transaction, if its host and its claim
// still hold exactly b: the binding as Bind, ByClaim, ByHost or a list
// returned it, down to Since. Releasing a binding that is gone is not an error,
// and neither is releasing one that was replaced (its host or claim bound
// again since): the newer binding is left alone.
func (l *Ledger) Release(ctx context.Context, b Binding) error {
	if err := b.validate(); err != nil {
		return err
	}
	hostKey, claimKey := l.hostKey(b.Host), l.claimKey(b.Claim.UID)
	for range maxAttempts {
		// Both keys at one revision.
		resp, err := l.client.Txn(ctx).Then(clientv3.OpGet(hostKey), clientv3.OpGet(claimKey)).Commit()
		if err != nil {
			return fmt.Errorf("releasing %s: %w", b.Host, err)
		}
		hostKV, hostHolds, err := holds(resp.Responses[0].GetResponseRange().Kvs, b)
		if err != nil {
			return err
		}
		claimKV, claimHolds, err := holds(resp.Responses[1].GetResponseRange().Kvs, b)
		if err != nil {
			return err
		}
		switch {
		case !hostHolds && !claimHolds:
			return nil
		case hostHolds != claimHolds:
			return fmt.Errorf("%w: only one of the keys of %s holds the binding of claim %s", ErrInconsistent, b.Host, b.Claim.UID)
		}
		del, err := l.client.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(hostKey), "=", hostKV.ModRevision),
			clientv3.Compare(clientv3.ModRevision(claimKey), "=", claimKV.ModRevision),
		).Then(
			clientv3.OpDelete(hostKey),
			clientv3.OpDelete(claimKey),
			clientv3.OpDelete(l.indexKey(b.Claim)),
		).Commit()
		if err != nil {
			return fmt.Errorf("releasing %s: %w", b.Host, err)
		}
		if del.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("releasing %s: %w", b.Host, ErrContention)
}

// holds returns the key-value of kvs, if any, and whether it holds b.
func holds(kvs []*mvccpb.KeyValue, b Binding) (*mvccpb.KeyValue, bool, error) {
	if len(kvs) == 0 {
		return nil, false, nil
	}
	stored, err := decode(kvs[0])
	if err != nil {
		return nil, false, err
	}
	return kvs[0], stored.same(b), nil
}

func decode(kv *mvccpb.KeyValue) (Binding, error) {
	var b Binding
	if err := json.Unmarshal(kv.Value, &b); err != nil {
		return Binding{}, fmt.Errorf("decoding binding at %s: %w", kv.Key, err)
	}
	return b, nil
}
