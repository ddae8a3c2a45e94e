package hostbinding

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"
)

// List returns every binding, ordered by claim UID, as of one revision. It
// reads in pages, so a large ledger does not make one large etcd response.
func (l *Ledger) List(ctx context.Context) ([]Binding, error) {
	var out []Binding
	dir := l.prefix + claimsDir
	_, err := l.rangeAll(ctx, dir, 0, false, func(kv *mvccpb.KeyValue) error {
		b, err := decode(kv)
		if err != nil {
			return err
		}
		out = append(out, b)
		return nil
	})
	return out, err
}

// ListTenant returns the bindings of the claims of the tenant with UID
// tenantUID, ordered by claim UID, as of one revision. It reads only that
// tenant's owner index and the claims it names.
func (l *Ledger) ListTenant(ctx context.Context, tenantUID types.UID) ([]Binding, error) {
	if tenantUID == "" {
		return nil, fmt.Errorf("%w: empty tenant UID", ErrInvalid)
	}
	dir := l.tenantDir(tenantUID)
	var claimKeys []string
	rev, err := l.rangeAll(ctx, dir, 0, true, func(kv *mvccpb.KeyValue) error {
		uid, err := url.PathUnescape(string(kv.Key[len(dir):]))
		if err != nil {
			return fmt.Errorf("%w: owner index key %s: %w", ErrInconsistent, kv.Key, err)
		}
		claimKeys = append(claimKeys, l.claimKey(types.UID(uid)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Binding, 0, len(claimKeys))
	for chunk := range slices.Chunk(claimKeys, maxTxnOps) {
		ops := make([]clientv3.Op, len(chunk))
		for i, key := range chunk {
			ops[i] = clientv3.OpGet(key, clientv3.WithRev(rev))
		}
		resp, err := l.client.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, err
		}
		for i, r := range resp.Responses {
			kvs := r.GetResponseRange().Kvs
			if len(kvs) == 0 {
				return nil, fmt.Errorf("%w: owner index of tenant %s names %s, which holds no binding", ErrInconsistent, tenantUID, chunk[i])
			}
			b, err := decode(kvs[0])
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// Orphans returns the bindings whose claim no longer exists, according to
// exists, ordered by claim UID. The caller deprovisions each orphan's host
// and then releases the binding. exists must not answer from a source older
// than the bindings it is asked about (a lagging informer cache may not yet
// hold a claim that is already bound): when in doubt, it must say true.
func (l *Ledger) Orphans(ctx context.Context, exists func(claimUID types.UID) bool) ([]Binding, error) {
	if exists == nil {
		return nil, fmt.Errorf("%w: no function tells which claims exist", ErrInvalid)
	}
	all, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	var orphans []Binding
	for _, b := range all {
		if !exists(b.Claim.UID) {
			orphans = append(orphans, b)
		}
	}
	return orphans, nil
}

// rangeAll calls fn for every key under dir as of revision rev (the current
// one if rev is 0), a page at a time, and returns the revision read.
func (l *Ledger) rangeAll(ctx context.Context, dir string, rev int64, keysOnly bool, fn func(*mvccpb.KeyValue) error) (int64, error) {
	key, end := dir, clientv3.GetPrefixRangeEnd(dir)
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(l.page)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := l.client.Get(ctx, key, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := fn(kv); err != nil {
				return 0, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
