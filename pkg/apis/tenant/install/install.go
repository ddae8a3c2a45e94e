// Package install registers the tenant.io API group in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
)

// Install registers the internal and v1alpha1 types of tenant.io, with
// v1alpha1 as the preferred version.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(tenant.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(v1alpha1.SchemeGroupVersion))
}
