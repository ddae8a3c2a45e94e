package apiserver

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"tenant.io/tenant-apiserver/pkg/apis/tenant/v1alpha1"
	"tenant.io/tenant-apiserver/pkg/intern"
)

// StorageCodec is the codec of tenant.io objects in etcd: JSON of
// v1alpha1, decoded into the internal types. The objects it decodes share
// their label and annotation keys and values, their managed-fields
// managers and versions, and their conditions' types, reasons and
// messages with the other objects it decoded, and equal label and
// annotation maps are one map (intern.SharedMap), equal managed-fields
// field sets one field set (intern.SharedFields): the watch caches hold
// every object of every tenant, and those strings are mostly alike, the
// labels of a tenant's objects all equal. Nothing writes into the label
// and annotation maps of a stored object (the strategies write the
// request's object, the syncer a deep copy), as nothing may into a watch
// cache's, nor into their field sets (the server's managed-fields code
// encodes new ones).
func StorageCodec() runtime.Codec {
	return compactingCodec{Codec: Codecs.LegacyCodec(v1alpha1.SchemeGroupVersion)}
}

type compactingCodec struct {
	runtime.Codec
}

// Decode implements runtime.Decoder.
func (c compactingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.Codec.Decode(data, defaults, into)
	if err == nil {
		compact(obj)
	}
	return obj, gvk, err
}

// compact interns the strings of a just-decoded object that objects share.
func compact(obj runtime.Object) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	intern.Labels(m)
	managed := m.GetManagedFields()
	for i := range managed {
		e := &managed[i]
		op := string(e.Operation)
		intern.Strings(&e.Manager, &e.APIVersion, &e.FieldsType, &e.Subresource, &op)
		e.Operation = metav1.ManagedFieldsOperationType(op)
		e.FieldsV1 = intern.SharedFields(e.FieldsV1)
	}
	if conditions := conditionsOf(obj); conditions != nil {
		for i := range *conditions {
			c := &(*conditions)[i]
			status := string(c.Status)
			intern.Strings(&c.Type, &c.Reason, &c.Message, &status)
			c.Status = metav1.ConditionStatus(status)
		}
	}
}

// conditionsFields holds, by object type, the index path of its
// .Status.Conditions ([]metav1.Condition), or nil when it has none.
var conditionsFields sync.Map

var conditionsType = reflect.TypeFor[[]metav1.Condition]()

// conditionsOf returns the status conditions of obj, nil when its kind has none.
func conditionsOf(obj runtime.Object) *[]metav1.Condition {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	t := v.Elem().Type()
	path, ok := conditionsFields.Load(t)
	if !ok {
		var p []int
		if status, found := t.FieldByName("Status"); found && status.Type.Kind() == reflect.Struct {
			if c, found := status.Type.FieldByName("Conditions"); found && c.Type == conditionsType {
				p = append(append([]int{}, status.Index...), c.Index...)
			}
		}
		path, _ = conditionsFields.LoadOrStore(t, p)
	}
	p := path.([]int)
	if p == nil {
		return nil
	}
	return v.Elem().FieldByIndex(p).Addr().Interface().(*[]metav1.Condition)
}
