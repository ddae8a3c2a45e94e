package ipam_test

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestEtcdRangeCompareSemantics pins down what the claim transaction relies
// on: a compare with a key range applies to every key in the range, and to a
// zero key-value (revisions 0) when the range is empty. So
// CreateRevision(k) = 0 with a prefix holds exactly when no key starts with
// k. A VALUE compare on an empty range, by contrast, always fails.
func TestEtcdRangeCompareSemantics(t *testing.T) {
	client := newClient(t, startEtcd(t))
	ctx := context.Background()
	holds := func(cmp clientv3.Cmp) bool {
		t.Helper()
		resp, err := client.Txn(ctx).If(cmp).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return resp.Succeeded
	}
	absent := func(k string) clientv3.Cmp { return clientv3.Compare(clientv3.CreateRevision(k), "=", 0) }

	if !holds(absent("/t/0").WithPrefix()) {
		t.Fatal("CreateRevision = 0 over an empty prefix fails; the claim transaction would never succeed")
	}
	if _, err := client.Put(ctx, "/t/0101", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Put(ctx, "/t/0110", "x"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cmp  clientv3.Cmp
		want bool
	}{
		{"prefix of two present keys (ancestor of both)", absent("/t/01").WithPrefix(), false},
		{"prefix equal to a present key", absent("/t/0101").WithPrefix(), false},
		{"prefix below a present key (descendant)", absent("/t/01011").WithPrefix(), true},
		{"prefix beside the present keys", absent("/t/00").WithPrefix(), true},
		{"point compare on an absent ancestor key", absent("/t/01"), true},
		{"point compare on a present key", absent("/t/0101"), false},
		{"CreateRevision > 0 over a range where all keys exist", clientv3.Compare(clientv3.CreateRevision("/t/01"), ">", 0).WithPrefix(), true},
		{"CreateRevision > 0 over an empty range", clientv3.Compare(clientv3.CreateRevision("/t/1"), ">", 0).WithPrefix(), false},
		{"VALUE = \"\" over an empty range", clientv3.Compare(clientv3.Value("/t/1"), "=", "").WithPrefix(), false},
		{"VALUE = \"\" on an absent key", clientv3.Compare(clientv3.Value("/t/1"), "=", ""), false},
	} {
		if got := holds(tc.cmp); got != tc.want {
			t.Errorf("%s: compare holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}
