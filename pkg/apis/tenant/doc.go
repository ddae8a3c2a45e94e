// +k8s:deepcopy-gen=package
// +groupName=tenant.io

// Package tenant is the internal version of the tenant.io API: the types the
// registry, validation and syncer work with. Clients use a versioned package.
package tenant
