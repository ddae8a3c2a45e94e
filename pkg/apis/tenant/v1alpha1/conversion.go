package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	"Network":         {"spec.topology", "spec.serviceNetwork"},
	"FloatingIP":      {"metadata.namespace", "spec.address", "status.address", "status.phase"},
	"LoadBalancer":    {"metadata.namespace", "spec.address", "status.address"},
	"HostClass":       {"spec.hostNamespace"},
	"HostClaim":       {"metadata.namespace", "spec.hostClass", "status.phase"},
}

func addFieldLabelConversionFuncs(scheme *runtime.Scheme) error {
	kinds := make([]string, 0, len(selectableFields))
	for kind := range selectableFields {
		kinds = append(kinds, kind)
	}
	return AddFieldLabelConversionFuncs(scheme, SchemeGroupVersion, kinds...)
}

// AddFieldLabelConversionFuncs registers, for each of kinds in group
// version gv, the field selectors the kind supports in tenant.io: a group
// that serves these types under another name (admin.tenant.io) selects
// on the same fields.
func AddFieldLabelConversionFuncs(scheme *runtime.Scheme, gv schema.GroupVersion, kinds ...string) error {
	for _, kind := range kinds {
		extra, ok := selectableFields[kind]
		if !ok {
			return fmt.Errorf("no field selectors known for kind %q", kind)
		}
		allowed := map[string]bool{"metadata.name": true}
		for _, f := range extra {
			allowed[f] = true
		}
		err := scheme.AddFieldLabelConversionFunc(gv.WithKind(kind), func(label, value string) (string, string, error) {
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
