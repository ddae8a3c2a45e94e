package controller

// NewStoreInformer lets the external tests build a storage informer.
var NewStoreInformer = newStoreInformer

// IndexByTenant lets the external tests index by tenant.
var IndexByTenant = indexByTenant

// NameOnly lets the external tests transform as the informer of rendered
// network attachments does.
var NameOnly = nameOnly
