package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

func init() {
	localSchemeBuilder.Register(addFieldLabelConversionFuncs)
}

// selectableFields are the field selectors each kind supports besides
// metadata.name (and metadata.namespace for namespaced kinds). The registry
// of each kind computes their values.
var selectableFields = map[string][]string{
	"Tenant":          {"status.phase"},
	"AddressPool":     {"spec.purpose"},
	"ProviderService": {"spec.service.namespace", "spec.service.name"},
	"VRFPeering":      {"spec.tenant", "spec.network"},
	"Namespace":       {"spec.network", "status.phase", "status.hostNamespace"},
	"Network":         {"spec.topology"},
	"FloatingIP":      {"metadata.namespace", "spec.address", "status.address", "status.phase"},
	"LoadBalancer":    {"metadata.namespace", "spec.address", "status.address"},
}

func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	for kind, extra := range selectableFields {
		allowed := map[string]bool{"metadata.name": true}
		for _, f := range extra {
			allowed[f] = true
		}
		kind := kind
		err := scheme.AddFieldLabelConversionFunc(SchemeGroupVersion.WithKind(kind), func(label, value string) (string, string, error) {
			if !allowed[label] {
				return "", "", fmt.Errorf("field label not supported for %s: %s", kind, label)
			}
			return label, value, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
