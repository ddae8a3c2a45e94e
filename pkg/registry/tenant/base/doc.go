// Package base holds what every tenant.io registry shares: a strategy
// parameterised by a kind's spec and status, its status strategy, the
// tenant-scoped REST front of partitioned stores, and table conversion.
// Each resource package under pkg/registry/tenant configures these for its
// kind; behaviour specific to a kind lives there and in pkg/apis/tenant/validation.
package base
