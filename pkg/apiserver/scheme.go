package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"tenant.io/tenant-apiserver/pkg/apis/admin"
	"tenant.io/tenant-apiserver/pkg/apis/tenant/install"
)

var (
	// Scheme knows the internal and versioned tenant.io types.
	Scheme = runtime.NewScheme()
	// Codecs encodes and decodes the types of Scheme.
	Codecs = serializer.NewCodecFactory(Scheme)

	// AdminScheme knows the kinds of admin.tenant.io, the provider's views:
	// tenant.io's types under that group. It is a scheme of its own so
	// that in Scheme every type has one kind, tenant.io's.
	AdminScheme = runtime.NewScheme()
	// AdminCodecs encodes the types of AdminScheme.
	AdminCodecs = serializer.NewCodecFactory(AdminScheme)
)

func init() {
	install.Install(Scheme)
	addServerTypes(Scheme)
	utilruntime.Must(admin.AddToScheme(AdminScheme))
	addServerTypes(AdminScheme)
}

// addServerTypes adds what the generic server needs of a scheme: it decodes
// list and get options in version v1 of the core group, and answers with
// its unversioned meta types.
func addServerTypes(scheme *runtime.Scheme) {
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}

// jsonOnly offers the encodings of a codec factory but protobuf: the
// tenant.io types have no protobuf form. Clients that prefer protobuf
// (kube-controller-manager's namespace and garbage collector controllers
// list and delete every kind through metadata clients) then get JSON, as
// they do from custom resources, instead of an encoding error.
type jsonOnly struct {
	runtime.NegotiatedSerializer
}

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (j jsonOnly) SupportedMediaTypes() []runtime.SerializerInfo {
	var out []runtime.SerializerInfo
	for _, info := range j.NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType != runtime.ContentTypeProtobuf {
			out = append(out, info)
		}
	}
	return out
}
