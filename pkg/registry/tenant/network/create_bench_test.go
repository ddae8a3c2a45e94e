package network_test

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// BenchmarkCreate measures a Network create through the whole write path
// of one replica on a real etcd (guard, validation, the tenant's quota,
// the subnet's claim, the strategy, the write): each iteration creates a
// Network with a default subnet and then, not timed, deletes it.
func BenchmarkCreate(b *testing.B) {
	r, _ := setup(b)
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("bench-%d", i)
		if _, err := r.createNetwork(alice, net(name), false); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := r.deleteNetwork(alice, name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkCreateInvalid measures the refusal of a Network whose subnet is
// malformed: a 422 that reads and claims nothing.
func BenchmarkCreateInvalid(b *testing.B) {
	r, _ := setup(b)
	for i := 0; b.Loop(); i++ {
		_, err := r.createNetwork(alice, net(fmt.Sprintf("bad-%d", i), "10.42.1.0/33"), false)
		if !apierrors.IsInvalid(err) {
			b.Fatalf("create of a malformed subnet: %v, want 422", err)
		}
	}
}
