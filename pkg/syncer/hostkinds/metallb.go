package hostkinds

import (
	"context"
	"encoding/json"
	"reflect"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/tools/cache"

	"tenant.io/tenant-apiserver/pkg/syncer/controller"
)

// MetalLB is the host kind of the MetalLB objects of resource gvr
// that the syncer makes in the MetalLB namespace, read through the
// dynamic client. spec is the typed spec the syncer wants (a pointer):
// specs compare in that form, so that fields the CRD defaults
// (avoidBuggyIPs: false) do not count as drift.
func (c *Catalogue) MetalLB(gvr schema.GroupVersionResource, kind string, spec interface{}) controller.HostKind[*unstructured.Unstructured] {
	k := withSpec(c.metalLB[gvr], spec)
	k.Kind = kind
	return k
}

// FRRConfigurations is the host kind of the FRRConfigurations the
// syncer makes in the frr-k8s namespace; spec is the typed spec wanted
// (a *frrk8sv1beta1.FRRConfigurationSpec), compared as MetalLB does.
func (c *Catalogue) FRRConfigurations(spec interface{}) controller.HostKind[*unstructured.Unstructured] {
	return withSpec(c.frr, spec)
}

// withSpec is k, a dynamicKind, comparing specs in the typed form spec.
func withSpec(k controller.HostKind[*unstructured.Unstructured], spec interface{}) controller.HostKind[*unstructured.Unstructured] {
	k.Matches = func(have, _ *unstructured.Unstructured) bool { return sameSpec(have, spec) }
	return k
}

// dynamicKind is the host kind of resource gvr read through the dynamic
// client and informer; withSpec says how its specs compare.
func dynamicKind(s *controller.Sources, gvr schema.GroupVersionResource, kind string, informer cache.SharedIndexInformer) controller.HostKind[*unstructured.Unstructured] {
	client := s.HostDynamic.Resource(gvr)
	return controller.HostKind[*unstructured.Unstructured]{
		Kind:     kind,
		Informer: informer,
		Written:  s.WrittenOf(informer),
		Create: func(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return client.Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{FieldManager: controller.FieldManager})
		},
		Get: func(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
			return client.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		},
		Update: func(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return client.Namespace(obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{FieldManager: controller.FieldManager})
		},
		Delete: func(ctx context.Context, namespace, name string, opts metav1.DeleteOptions) error {
			return client.Namespace(namespace).Delete(ctx, name, opts)
		},
		Repair: func(have, want *unstructured.Unstructured) *unstructured.Unstructured {
			out := have.DeepCopy()
			out.Object["spec"] = want.Object["spec"]
			return out
		},
	}
}

// NewMetalLBObject returns the MetalLB (or frr-k8s) object of resource
// gvr named namespace/name with spec (a pointer to the typed spec).
func NewMetalLBObject(gvr schema.GroupVersionResource, kind, namespace, name string, spec interface{}) (*unstructured.Unstructured, error) {
	// Through JSON, so that numbers are int64 as in objects read from the
	// host (the converter keeps a uint32 ASN a uint64, which unstructured
	// objects cannot deep-copy).
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var raw map[string]interface{}
	if err := utiljson.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{"spec": raw}}
	u.SetGroupVersionKind(gvr.GroupVersion().WithKind(kind))
	u.SetName(name)
	u.SetNamespace(namespace)
	return u, nil
}

// sameSpec compares the spec of have with want in want's typed form.
func sameSpec(have *unstructured.Unstructured, want interface{}) bool {
	raw, _, err := unstructured.NestedMap(have.Object, "spec")
	if err != nil {
		return false
	}
	typed := reflect.New(reflect.TypeOf(want).Elem()).Interface()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, typed); err != nil {
		return false // not even our shape: rewrite it
	}
	return reflect.DeepEqual(typed, want)
}
