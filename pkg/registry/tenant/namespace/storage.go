package namespace

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"

	"tenant.io/tenant-apiserver/pkg/apis/tenant"
	"tenant.io/tenant-apiserver/pkg/registry/tenant/kindstore"
)

// NewStorage returns the storage of namespaces and namespaces/status. A
// Namespace names an existing Network (Attachment), and is not deleted
// while it holds objects or its host namespace runs pods (Deletion).
func NewStorage(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, deps kindstore.Deps) (*kindstore.Storage, error) {
	st, err := kindstore.NewStorage(scheme, optsGetter, kindstore.Resource[*tenant.Namespace, tenant.NamespaceSpec, tenant.NamespaceStatus]{
		Kind:          Kind,
		Plural:        "namespaces",
		Singular:      "namespace",
		ShortNames:    []string{"tns"},
		New:           func() runtime.Object { return &tenant.Namespace{} },
		NewList:       func() runtime.Object { return &tenant.NamespaceList{} },
		Fields:        SelectableFields,
		QuotaResource: "namespaces",
		Table:         kindstore.Table[*tenant.Namespace]{Columns: columns},
	}, deps)
	if err != nil {
		return nil, err
	}
	st.Install(kindstore.OnWrite((&Attachment{Storages: deps.Storages}).Create, nil))
	st.Install(kindstore.Hooks{BeforeDelete: (&Deletion{Storages: deps.Storages, HostWorkloads: deps.HostWorkloads}).BeforeDelete})
	return st, nil
}

var columns = []kindstore.Column[*tenant.Namespace]{
	{Name: "Network", Type: "string", Description: "Primary Network of the namespace.", Cell: func(o *tenant.Namespace) interface{} { return o.Spec.Network }},
	{Name: "Phase", Type: "string", Description: "Lifecycle phase.", Cell: func(o *tenant.Namespace) interface{} { return string(o.Status.Phase) }},
	{Name: "Host Namespace", Type: "string", Description: "Name of the namespace on the host.", Cell: func(o *tenant.Namespace) interface{} { return kindstore.OrNone(o.Status.HostNamespace) }},
	{Name: "Ready", Type: "string", Description: "Whether pods can run in the namespace: it exists on the host and is attached to its network.", Cell: func(o *tenant.Namespace) interface{} {
		return kindstore.ConditionStatus(o.Status.Conditions, tenant.ConditionReady)
	}},
}
