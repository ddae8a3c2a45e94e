package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/fuzzer"
)

// TestRoundTripTypes fills every internal kind of the group at random and
// checks it survives internal -> v1alpha1 -> JSON -> v1alpha1 -> internal.
func TestRoundTripTypes(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzer.Funcs)
}
