package hostbinding

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// minSpread and maxSpread bound how many of the first free candidates
	// a bind that lost a race chooses among on its next try.
	minSpread = 16
	maxSpread = 1024
	// extraAttempts is how many lost races BindFirstFree allows beyond
	// two per candidate. Without releases every lost race means a
	// candidate taken for good, so only churn can use them up.
	extraAttempts = 16
)

// BindFirstFree binds claim to one of candidates, which are in the caller's
// order of preference, and returns the binding. If the claim already holds a
// host (one of the candidates or not), it returns that binding. It aims at
// the first free candidate, or at a random one of the first few free ones
// while replicas are binding the same candidates at once (see the package
// documentation). When every candidate is bound to another claim the error
// wraps ErrNoHost.
func (l *Ledger) BindFirstFree(ctx context.Context, claim Claim, candidates []Host) (Binding, error) {
	if err := claim.validate(); err != nil {
		return Binding{}, err
	}
	for _, h := range candidates {
		if err := h.validate(); err != nil {
			return Binding{}, err
		}
	}
	spread := max(int(l.spread.Load()), 1)
	lost := false
	for attempt := 0; ; attempt++ {
		held, free, err := l.freeHosts(ctx, claim.UID, candidates)
		if err != nil {
			return Binding{}, err
		}
		if held != nil {
			if held.Claim.TenantUID != claim.TenantUID {
				return Binding{}, fmt.Errorf("%w: claim UID %s is bound for another tenant", ErrInvalid, claim.UID)
			}
			return *held, nil
		}
		if len(free) == 0 {
			return Binding{}, fmt.Errorf("binding %s/%s: all %d candidates are bound: %w", claim.Namespace, claim.Name, len(candidates), ErrNoHost)
		}
		if attempt == 2*len(candidates)+extraAttempts {
			return Binding{}, fmt.Errorf("binding %s/%s: %w", claim.Namespace, claim.Name, ErrContention)
		}
		pick := l.aim(free, spread)
		b, err := l.Bind(ctx, claim, pick)
		l.landed(pick)
		switch {
		case err == nil:
			if !lost {
				// Races are over for now: drift back to the first free.
				l.spread.Store(l.spread.Load() * 7 / 8)
			}
			return b, nil
		case !errors.Is(err, ErrHostTaken):
			return Binding{}, err
		}
		// Another replica was faster: aim wider, at what is still free.
		l.lostRaces.Add(1)
		lost = true
		spread = min(max(4*spread, minSpread), maxSpread)
		l.spread.Store(int64(spread))
	}
}

// aim picks a random one of the first spread hosts of free, leaving out
// those that other calls of this ledger are binding now unless no other is
// free, and marks it as being bound until landed. Calls in one process thus
// do not race each other; calls in other processes still may.
func (l *Ledger) aim(free []Host, spread int) Host {
	l.mu.Lock()
	defer l.mu.Unlock()
	open := make([]Host, 0, min(spread, len(free)))
	for _, h := range free {
		if len(open) == spread {
			break
		}
		if l.inFlight[h] == 0 {
			open = append(open, h)
		}
	}
	if len(open) == 0 {
		open = free[:min(spread, len(free))]
	}
	pick := open[rand.IntN(len(open))]
	l.inFlight[pick]++
	return pick
}

// landed ends the mark aim put on h.
func (l *Ledger) landed(h Host) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inFlight[h]--; l.inFlight[h] == 0 {
		delete(l.inFlight, h)
	}
}

// freeHosts reads, at one revision, the binding of the claim with UID
// claimUID (nil if it holds none) and which candidates are not bound, in
// their order. Entry 0 of the reads is the claim, entry i the candidate i-1.
func (l *Ledger) freeHosts(ctx context.Context, claimUID types.UID, candidates []Host) (*Binding, []Host, error) {
	var (
		held *Binding
		free []Host
		rev  int64
	)
	n := len(candidates) + 1
	for start := 0; start < n; start += maxTxnOps {
		end := min(start+maxTxnOps, n)
		ops := make([]clientv3.Op, 0, end-start)
		for i := start; i < end; i++ {
			if i == 0 {
				ops = append(ops, clientv3.OpGet(l.claimKey(claimUID)))
				continue
			}
			opts := []clientv3.OpOption{clientv3.WithKeysOnly()}
			if rev > 0 {
				opts = append(opts, clientv3.WithRev(rev))
			}
			ops = append(ops, clientv3.OpGet(l.hostKey(candidates[i-1]), opts...))
		}
		resp, err := l.client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, nil, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for j, r := range resp.Responses {
			kvs := r.GetResponseRange().Kvs
			switch i := start + j; {
			case i == 0 && len(kvs) > 0:
				b, err := decode(kvs[0])
				if err != nil {
					return nil, nil, err
				}
				held = &b
			case i > 0 && len(kvs) == 0:
				free = append(free, candidates[i-1])
			}
		}
	}
	return held, free, nil
}
