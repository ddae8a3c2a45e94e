// Package kindstore builds the storage of one tenant.io kind and is the one
// path its writes take. A kind declares itself (Resource: its names, spec
// and status, validation, table, quota, fields) and adds its own rules as
// Hooks; kindstore gives it an etcd-backed store partitioned by tenant, a
// REST front bound to what the caller may see (GuardedREST, StatusREST),
// the strategies, and the write pipeline: guard, validation (once, before
// any hook), the kind's hooks in the order installed, quota, the
// server-assigned status, and the delete checks with their causes.
//
// Each resource package under pkg/registry/tenant declares its kind with
// it; the rules of the kind live there and in pkg/apis/tenant/validation.
package kindstore
