package tenant

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClass is a class of bare-metal servers the provider offers to tenants:
// the Metal3 BareMetalHosts of one provider namespace that its selector
// picks, and the labels of theirs that tenants may select on.
type HostClass struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec says which servers the class holds and who may claim them.
	Spec HostClassSpec
	// status reports the class's servers.
	Status HostClassStatus
}

// HostClassSpec says which servers a class holds and who may claim them.
type HostClassSpec struct {
	// hostNamespace is the provider namespace of the class's BareMetalHosts. Immutable.
	HostNamespace string
	// hostSelector selects the class's BareMetalHosts in hostNamespace by
	// the provider's labels. Empty: all of them.
	HostSelector *metav1.LabelSelector
	// tenantLabels are the label keys of the servers that tenants may
	// select on in a HostClaim's hostSelector, and see in the class's status.
	TenantLabels []string
	// hardware is Summary (the default: CPU, memory, storage and NICs of the
	// claimed server in the HostClaim's status) or None.
	Hardware HostHardwareVisibility
	// tenants are the names of the tenants the class is offered to.
	Tenants []string
	// allTenants offers the class to every tenant; tenants must then be empty.
	AllTenants bool
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
	ObservedGeneration int64
	// hosts is the number of servers in the class.
	Hosts int32
	// available is the number of servers that can be claimed now.
	Available int32
	// claimed is the number of servers bound to a HostClaim.
	Claimed int32
	// labels are the values of the tenant labels on the class's servers.
	Labels []HostClassLabel
	// conditions are Ready.
	Conditions []metav1.Condition
}

// HostClassLabel is one tenant label of a class and the values its servers have.
type HostClassLabel struct {
	// key of the label.
	Key string
	// values of the label on the class's servers.
	Values []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClassList is a list of HostClasses.
type HostClassList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the HostClasses.
	Items []HostClass
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClaim claims a server of a HostClass for the tenant: the syncer binds
// one free server of the class to it, provisions it with the claim's image
// and data, and reports what the tenant needs to use it. The tenant never
// sees the server's definition or its BMC.
type HostClaim struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// spec says what server is wanted and how it boots.
	Spec HostClaimSpec
	// status reports the claimed server.
	Status HostClaimStatus
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
	Kind HostClaimKind
	// hostClass names the HostClass the server comes from. Immutable.
	HostClass string
	// hostSelector selects among the class's servers by its tenant labels. Immutable.
	HostSelector *metav1.LabelSelector
	// online powers the server on (true) or off. Default false.
	Online bool
	// image is the operating system image to provision; without one the
	// server stays bound and unprovisioned. It may be set and removed
	// (removing it deprovisions and cleans the server), not changed.
	Image *HostImage
	// userData names a Secret of the claim's Namespace holding the
	// server's cloud-init user data, under the key "userData" or as the
	// Secret's only key; at most 64 KiB. metaData and networkData likewise.
	UserData *HostDataSecret
	// metaData names the Secret of the server's cloud-init meta-data.
	MetaData *HostDataSecret
	// networkData names the Secret of the server's cloud-init network configuration.
	NetworkData *HostDataSecret
	// rebootRequestedAt asks for one reboot of a powered-on server when it
	// is later than status.lastRebootRequest.
	RebootRequestedAt *metav1.Time
}

// HostImage is an operating system image.
type HostImage struct {
	// url of the image (http or https).
	URL string
	// checksum of the image, or the URL of a file holding it.
	Checksum string
	// checksumType is md5, sha256, sha512 or auto. Default auto.
	ChecksumType string
	// format is raw, qcow2, vdi, vmdk or live-iso. Default: detected.
	Format string
}

// HostDataSecret names a Secret of the claim's Namespace.
type HostDataSecret struct {
	// name of the Secret.
	Name string
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
	ObservedGeneration int64
	// phase is Pending, Bound, Provisioning, Provisioned, Deprovisioning or Failed.
	Phase HostClaimPhase
	// power is On or Off, as the server reports it.
	Power HostPowerState
	// addresses of the server.
	Addresses []HostAddress
	// bootMACAddress is the MAC address of the NIC the server boots from.
	BootMACAddress string
	// nics are the server's network interfaces.
	NICs []HostNIC
	// hardware summarizes the server, when its class shows it.
	Hardware *HostHardware
	// lastRebootRequest is the spec.rebootRequestedAt last carried out.
	LastRebootRequest *metav1.Time
	// conditions are Associated (a server is bound) and Ready (provisioned,
	// and powered as spec.online asks), and HostSynced.
	Conditions []metav1.Condition
}

// HostAddress is an address of a server.
type HostAddress struct {
	// type is InternalIP: an address of one of the server's NICs as
	// inspected. (The inspection's hostname is the provisioning ramdisk's,
	// not the image's, and is not reported.)
	Type string
	// address is the address.
	Address string
}

// HostNIC is a network interface of a server.
type HostNIC struct {
	// name of the interface.
	Name string
	// mac is its MAC address.
	MAC string
	// ip is its IP address, if it has one.
	IP string
	// speedGbps is its speed.
	SpeedGbps int32
}

// HostHardware summarizes a server's hardware.
type HostHardware struct {
	// cpuArch is the CPU architecture.
	CPUArch string
	// cpuCount is the number of CPU threads.
	CPUCount int32
	// ramMebibytes is the memory size.
	RAMMebibytes int32
	// storageGigabytes is the size of all disks together.
	StorageGigabytes int64
	// nicCount is the number of NICs.
	NICCount int32
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// HostClaimList is a list of HostClaims.
type HostClaimList struct {
	metav1.TypeMeta
	metav1.ListMeta

	// items are the HostClaims.
	Items []HostClaim
}
