package ipam

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// rangePage is how many keys one read of a long range returns.
const rangePage = 1000

// keyValue is the part of an etcd key-value the allocator uses.
type keyValue struct {
	key    string
	value  []byte
	modRev int64
}

// rangeAll calls fn for every key in [key, end) as of revision rev (the
// current one if rev is 0), a page at a time, and returns the revision read.
func rangeAll(ctx context.Context, client *clientv3.Client, key, end string, rev int64, keysOnly bool, fn func(keyValue) error) (int64, error) {
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(rangePage)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		if keysOnly {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := client.Get(ctx, key, opts...)
		if err != nil {
			return 0, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if err := fn(keyValue{key: string(kv.Key), value: kv.Value, modRev: kv.ModRevision}); err != nil {
				return 0, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
