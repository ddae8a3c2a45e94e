package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClass is a class of bare-metal servers the provider offers to tenants:
// the Metal3 BareMetalHosts of one provider namespace that its selector
// picks, and the labels of theirs that tenants may select on.
type HostClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says which servers the class holds and who may claim them.
	// +optional
	Spec HostClassSpec `json:"spec,omitempty"`
	// status reports the class's servers.
	// +optional
	Status HostClassStatus `json:"status,omitempty"`
}

// HostClassSpec says which servers a class holds and who may claim them.
type HostClassSpec struct {
	// hostNamespace is the provider namespace of the class's BareMetalHosts. Immutable.
	HostNamespace string `json:"hostNamespace"`
	// hostSelector selects the class's BareMetalHosts in hostNamespace by
	// the provider's labels. Empty: all of them.
	// +optional
	HostSelector *metav1.LabelSelector `json:"hostSelector,omitempty"`
	// tenantLabels are the label keys of the servers that tenants may
	// select on in a HostClaim's hostSelector, and see in the class's status.
	// +optional
	// +listType=set
	TenantLabels []string `json:"tenantLabels,omitempty"`
	// hardware is Summary (the default: CPU, memory, storage and NICs of the
	// claimed server in the HostClaim's status) or None.
	// +optional
	Hardware HostHardwareVisibility `json:"hardware,omitempty"`
	// tenants are the names of the tenants the class is offered to.
	// +optional
	// +listType=set
	Tenants []string `json:"tenants,omitempty"`
	// allTenants offers the class to every tenant; tenants must then be empty.
	// +optional
	AllTenants bool `json:"allTenants,omitempty"`
}

// HostHardwareVisibility says how much of a server's hardware its claim shows.
type HostHardwareVisibility string

// The hardware visibilities of a HostClass.
const (
	HostHardwareSummary HostHardwareVisibility = "Summary"
	HostHardwareNone    HostHardwareVisibility = "None"
)

// HostClassStatus reports the servers of a class.
type HostClassStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// hosts is the number of servers in the class.
	// +optional
	Hosts int32 `json:"hosts,omitempty"`
	// available is the number of servers that can be claimed now.
	// +optional
	Available int32 `json:"available,omitempty"`
	// claimed is the number of servers bound to a HostClaim.
	// +optional
	Claimed int32 `json:"claimed,omitempty"`
	// labels are the values of the tenant labels on the class's servers.
	// +optional
	// +listType=map
	// +listMapKey=key
	Labels []HostClassLabel `json:"labels,omitempty"`
	// conditions are Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// HostClassLabel is one tenant label of a class and the values its servers have.
type HostClassLabel struct {
	// key of the label.
	Key string `json:"key"`
	// values of the label on the class's servers.
	// +optional
	// +listType=atomic
	Values []string `json:"values,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClassList is a list of HostClasses.
type HostClassList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the HostClasses.
	Items []HostClass `json:"items"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClaim claims a server of a HostClass for the tenant: the syncer binds
// one free server of the class to it, provisions it with the claim's image
// and data, and reports what the tenant needs to use it. The tenant never
// sees the server's definition or its BMC.
type HostClaim struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec says what server is wanted and how it boots.
	// +optional
	Spec HostClaimSpec `json:"spec,omitempty"`
	// status reports the claimed server.
	// +optional
	Status HostClaimStatus `json:"status,omitempty"`
}

// HostClaimKind is the kind of compute a HostClaim asks for.
type HostClaimKind string

// The kinds of HostClaims.
const (
	// HostClaimBareMetal: a recyclable bare-metal server, cleaned when released.
	HostClaimBareMetal HostClaimKind = "BareMetal"
)

// HostClaimSpec says what server a HostClaim wants and how it boots.
type HostClaimSpec struct {
	// kind is BareMetal. Default BareMetal. Immutable.
	// +optional
	Kind HostClaimKind `json:"kind,omitempty"`
	// hostClass names the HostClass the server comes from. Immutable.
	HostClass string `json:"hostClass"`
	// hostSelector selects among the class's servers by its tenant labels. Immutable.
	// +optional
	HostSelector *metav1.LabelSelector `json:"hostSelector,omitempty"`
	// online powers the server on (true) or off. Default false.
	// +optional
	Online bool `json:"online,omitempty"`
	// image is the operating system image to provision; without one the
	// server stays bound and unprovisioned. It may be set and removed
	// (removing it deprovisions and cleans the server), not changed.
	// +optional
	Image *HostImage `json:"image,omitempty"`
	// userData names a Secret of the claim's Namespace holding the
	// server's cloud-init user data, under the key "userData" or as the
	// Secret's only key; at most 64 KiB. metaData and networkData likewise.
	// +optional
	UserData *HostDataSecret `json:"userData,omitempty"`
	// metaData names the Secret of the server's cloud-init meta-data.
	// +optional
	MetaData *HostDataSecret `json:"metaData,omitempty"`
	// networkData names the Secret of the server's cloud-init network configuration.
	// +optional
	NetworkData *HostDataSecret `json:"networkData,omitempty"`
	// rebootRequestedAt asks for one reboot of a powered-on server when it
	// is later than status.lastRebootRequest.
	// +optional
	RebootRequestedAt *metav1.Time `json:"rebootRequestedAt,omitempty"`
}

// HostImage is an operating system image.
type HostImage struct {
	// url of the image (http or https).
	URL string `json:"url"`
	// checksum of the image, or the URL of a file holding it.
	Checksum string `json:"checksum"`
	// checksumType is md5, sha256, sha512 or auto. Default auto.
	// +optional
	ChecksumType string `json:"checksumType,omitempty"`
	// format is raw, qcow2, vdi, vmdk or live-iso. Default: detected.
	// +optional
	Format string `json:"format,omitempty"`
}

// HostDataSecret names a Secret of the claim's Namespace.
type HostDataSecret struct {
	// name of the Secret.
	Name string `json:"name"`
}

// HostClaimPhase is where a claimed server stands.
type HostClaimPhase string

// The phases of a HostClaim.
const (
	// HostClaimPending: no server is bound yet.
	HostClaimPending HostClaimPhase = "Pending"
	// HostClaimBound: a server is bound and has no image.
	HostClaimBound HostClaimPhase = "Bound"
	// HostClaimProvisioning: the image is being written.
	HostClaimProvisioning HostClaimPhase = "Provisioning"
	// HostClaimProvisioned: the server runs the image.
	HostClaimProvisioned HostClaimPhase = "Provisioned"
	// HostClaimDeprovisioning: the image was removed; the server is being cleaned.
	HostClaimDeprovisioning HostClaimPhase = "Deprovisioning"
	// HostClaimFailed: the server reports an error.
	HostClaimFailed HostClaimPhase = "Failed"
)

// HostPowerState is On or Off.
type HostPowerState string

// The power states of a claimed server.
const (
	HostPowerOn  HostPowerState = "On"
	HostPowerOff HostPowerState = "Off"
)

// HostClaimStatus reports a claimed server.
type HostClaimStatus struct {
	// observedGeneration is the generation of the spec the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// phase is Pending, Bound, Provisioning, Provisioned, Deprovisioning or Failed.
	// +optional
	Phase HostClaimPhase `json:"phase,omitempty"`
	// power is On or Off, as the server reports it.
	// +optional
	Power HostPowerState `json:"power,omitempty"`
	// addresses of the server.
	// +optional
	// +listType=atomic
	Addresses []HostAddress `json:"addresses,omitempty"`
	// bootMACAddress is the MAC address of the NIC the server boots from.
	// +optional
	BootMACAddress string `json:"bootMACAddress,omitempty"`
	// nics are the server's network interfaces.
	// +optional
	// +listType=atomic
	NICs []HostNIC `json:"nics,omitempty"`
	// hardware summarizes the server, when its class shows it.
	// +optional
	Hardware *HostHardware `json:"hardware,omitempty"`
	// lastRebootRequest is the spec.rebootRequestedAt last carried out.
	// +optional
	LastRebootRequest *metav1.Time `json:"lastRebootRequest,omitempty"`
	// conditions are Associated (a server is bound) and Ready (provisioned,
	// and powered as spec.online asks), and HostSynced.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchMergeKey=type
	// +patchStrategy=merge
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// HostAddress is an address of a server.
type HostAddress struct {
	// type is InternalIP: an address of one of the server's NICs as
	// inspected. (The inspection's hostname is the provisioning ramdisk's,
	// not the image's, and is not reported.)
	Type string `json:"type"`
	// address is the address.
	Address string `json:"address"`
}

// HostNIC is a network interface of a server.
type HostNIC struct {
	// name of the interface.
	Name string `json:"name"`
	// mac is its MAC address.
	MAC string `json:"mac"`
	// ip is its IP address, if it has one.
	// +optional
	IP string `json:"ip,omitempty"`
	// speedGbps is its speed.
	// +optional
	SpeedGbps int32 `json:"speedGbps,omitempty"`
}

// HostHardware summarizes a server's hardware.
type HostHardware struct {
	// cpuArch is the CPU architecture.
	// +optional
	CPUArch string `json:"cpuArch,omitempty"`
	// cpuCount is the number of CPU threads.
	// +optional
	CPUCount int32 `json:"cpuCount,omitempty"`
	// ramMebibytes is the memory size.
	// +optional
	RAMMebibytes int32 `json:"ramMebibytes,omitempty"`
	// storageGigabytes is the size of all disks together.
	// +optional
	StorageGigabytes int64 `json:"storageGigabytes,omitempty"`
	// nicCount is the number of NICs.
	// +optional
	NICCount int32 `json:"nicCount,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClaimList is a list of HostClaims.
type HostClaimList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the HostClaims.
	Items []HostClaim `json:"items"`
}
