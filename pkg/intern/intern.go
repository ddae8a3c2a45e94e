// Package intern keeps one copy of strings that many cached objects hold:
// label and annotation keys and values, managed-fields managers, condition
// reasons. A decoded object holds a copy of every string of its own; the
// caches of tenant-apiserver hold tens of thousands of objects whose keys
// are all alike and whose values mostly are.
package intern

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxStrings bounds the strings the table keeps: when full, it starts over
// (the objects keep the copies they hold), so that names and UIDs, which
// no two objects share, cost a bounded table, and the shared keys and
// values are soon in it again.
const maxStrings = 1 << 14

var table = struct {
	sync.Mutex
	m map[string]string
}{m: make(map[string]string, maxStrings)}

// String returns the copy of s that callers share.
func String(s string) string {
	table.Lock()
	defer table.Unlock()
	return stringLocked(s)
}

// Strings interns each of the strings ps point to, taking the table once.
func Strings(ps ...*string) {
	table.Lock()
	defer table.Unlock()
	for _, p := range ps {
		*p = stringLocked(*p)
	}
}

func stringLocked(s string) string {
	if s == "" {
		return s
	}
	if v, ok := table.m[s]; ok {
		return v
	}
	if len(table.m) >= maxStrings {
		clear(table.m)
	}
	table.m[s] = s
	return s
}

// Map returns a copy of m whose keys and values are interned, or m itself
// when it is empty. It takes the table once for all of them: the caches
// decode on several goroutines at once.
func Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	table.Lock()
	defer table.Unlock()
	for k, v := range m {
		out[stringLocked(k)] = stringLocked(v)
	}
	return out
}

// Labels gives a just-decoded, read-only object the shared copies of its
// label and annotation maps (SharedMap), their keys and values interned.
func Labels(m metav1.Object) {
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(SharedMap(l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(SharedMap(a))
	}
}

// LabelsAcrossVersions is Labels for an object of a kind written again and
// again without its labels and annotations changing (SharedAcrossVersions).
func LabelsAcrossVersions(m metav1.Object) {
	if l := m.GetLabels(); len(l) > 0 {
		m.SetLabels(SharedAcrossVersions(l))
	}
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(SharedAcrossVersions(a))
	}
}
