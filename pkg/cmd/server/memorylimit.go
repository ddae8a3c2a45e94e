package server

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
)

// DefaultMemoryLimitRatio is the share of the container's memory limit
// that tenant-apiserver gives the Go runtime as its soft memory limit.
// The rest is for what the runtime does not count (the binary's pages,
// kernel buffers) and for the collector to catch up.
const DefaultMemoryLimitRatio = 0.9

// cgroupMemoryLimitFiles returns the files that may hold the memory
// limit of the process' own cgroup, in the order to read them: found from
// its /proc/self/cgroup and /proc/self/mountinfo (cgroup v2's memory.max,
// cgroup v1's memory.limit_in_bytes of the memory controller), then where
// a container, which sees its own cgroup as the root, has them.
func cgroupMemoryLimitFiles(cgroup, mountinfo string) []string {
	var v2Path, v1Path string
	hasV1 := false
	for _, line := range strings.Split(cgroup, "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			v2Path = f[2]
		case slices.Contains(strings.Split(f[1], ","), "memory"):
			v1Path, hasV1 = f[2], true
		}
	}
	var files []string
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent major:minor root mount-point options [optional...] - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		mf, pf := strings.Fields(pre), strings.Fields(post)
		if len(mf) < 5 || len(pf) < 3 {
			continue
		}
		root, mountPoint := mf[3], mf[4]
		switch {
		case pf[0] == "cgroup2" && v2Path != "" && !hasV1:
			files = append(files, filepath.Join(mountPoint, withinMount(v2Path, root), "memory.max"))
		case pf[0] == "cgroup" && hasV1 && slices.Contains(strings.Split(pf[2], ","), "memory"):
			files = append(files, filepath.Join(mountPoint, withinMount(v1Path, root), "memory.limit_in_bytes"))
		}
	}
	return append(files, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
}

// withinMount is cgroup path p relative to a mount of the hierarchy at
// root; a path outside the mount (a cgroup namespace's "/..") is the
// mount's own cgroup.
func withinMount(p, root string) string {
	rel, ok := strings.CutPrefix(p, root)
	if !ok || strings.Contains(p, "/..") || (root != "/" && rel != "" && rel[0] != '/') {
		return "/"
	}
	return rel
}

// cgroupMemoryLimit returns the memory limit, in bytes, in the first of
// files that exists, or 0 when it is no limit ("max", cgroup v1's
// "unlimited" of nearly 2^63) or no file exists.
func cgroupMemoryLimit(files []string) (int64, string, error) {
	for _, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, path, err
		}
		v := strings.TrimSpace(string(data))
		if v == "max" {
			return 0, path, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, path, fmt.Errorf("reading %s: %w", path, err)
		}
		// cgroup v1 writes "no limit" as the largest page-aligned int64.
		if n <= 0 || n >= 1<<62 {
			return 0, path, nil
		}
		return n, path, nil
	}
	return 0, "", nil
}

// ownCgroupMemoryLimitFiles are cgroupMemoryLimitFiles of this process.
func ownCgroupMemoryLimitFiles() []string {
	cgroup, _ := os.ReadFile("/proc/self/cgroup")
	mountinfo, _ := os.ReadFile("/proc/self/mountinfo")
	return cgroupMemoryLimitFiles(string(cgroup), string(mountinfo))
}

// memoryLimit is what applyMemoryLimit did: the soft limit it set (0:
// none) and why.
type memoryLimit struct {
	Bytes  int64
	Reason string
}

// applyMemoryLimit gives the Go runtime a soft memory limit of ratio times
// the cgroup memory limit in the first of files that exists, so that the collector runs
// harder as the heap nears the container's limit instead of the process
// being killed there. An explicit GOMEMLIMIT (the runtime has read it at
// start) or a ratio of 0 leaves the runtime as it is.
func applyMemoryLimit(ratio float64, files []string, getenv func(string) string) (memoryLimit, error) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		return memoryLimit{Bytes: debug.SetMemoryLimit(-1), Reason: "GOMEMLIMIT=" + v}, nil
	}
	if ratio == 0 {
		return memoryLimit{Reason: "--memory-limit-ratio=0"}, nil
	}
	limit, path, err := cgroupMemoryLimit(files)
	if err != nil {
		return memoryLimit{}, err
	}
	if limit == 0 {
		return memoryLimit{Reason: "no cgroup memory limit"}, nil
	}
	soft := int64(math.Round(float64(limit) * ratio))
	debug.SetMemoryLimit(soft)
	return memoryLimit{Bytes: soft, Reason: fmt.Sprintf("%g of %s (%d bytes)", ratio, path, limit)}, nil
}

// validateMemoryLimitRatio checks --memory-limit-ratio.
func validateMemoryLimitRatio(ratio float64) error {
	if math.IsNaN(ratio) || ratio < 0 || ratio > 1 {
		return fmt.Errorf("--memory-limit-ratio %g: must be between 0 (no soft limit) and 1", ratio)
	}
	return nil
}
