package host

// SameShared says whether a and b hold one array of shared entries.
func SameShared(a, b Pairs) bool {
	return len(a.shared) > 0 && len(a.shared) == len(b.shared) && &a.shared[0] == &b.shared[0]
}
