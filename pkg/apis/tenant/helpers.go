package tenant

// SameTarget says whether two FloatingIP targets name the same workload
// (both nil: neither has one).
func SameTarget(a, b *FloatingIPTarget) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
