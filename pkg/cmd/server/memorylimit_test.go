package server

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestApplyMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	const twoGiB = 2 << 30
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		name    string
		files   map[string]string // relative to the cgroup root
		ratio   float64
		env     func(string) string
		want    int64 // the soft limit set; 0: the runtime's left as it was
		wantErr string
	}{
		{name: "cgroup v2 limit", files: map[string]string{"memory.max": "2147483648\n"}, ratio: 0.9, want: int64(math.Round(0.9 * twoGiB))},
		{name: "cgroup v2 without limit", files: map[string]string{"memory.max": "max\n"}, ratio: 0.9},
		{name: "cgroup v1 limit", files: map[string]string{"memory/memory.limit_in_bytes": "2147483648\n"}, ratio: 0.5, want: twoGiB / 2},
		{name: "cgroup v1 without limit", files: map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, ratio: 0.9},
		{name: "v2 read before v1", files: map[string]string{"memory.max": "1073741824", "memory/memory.limit_in_bytes": "2147483648"}, ratio: 1, want: 1 << 30},
		{name: "no cgroup files", ratio: 0.9},
		{name: "ratio 0 sets none", files: map[string]string{"memory.max": "2147483648"}, ratio: 0},
		{name: "GOMEMLIMIT wins", files: map[string]string{"memory.max": "2147483648"}, ratio: 0.9,
			env: func(k string) string {
				if k == "GOMEMLIMIT" {
					return "100MiB"
				}
				return ""
			}},
		{name: "unreadable limit", files: map[string]string{"memory.max": "lots"}, ratio: 0.9, wantErr: "memory.max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tc.files {
				path := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			const untouched = 123 << 20
			debug.SetMemoryLimit(untouched)
			env := tc.env
			if env == nil {
				env = noEnv
			}
			files := []string{filepath.Join(root, "memory.max"), filepath.Join(root, "memory/memory.limit_in_bytes")}
			got, err := applyMemoryLimit(tc.ratio, files, env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			runtimeLimit := debug.SetMemoryLimit(-1)
			switch {
			case tc.want == 0 && runtimeLimit != untouched:
				t.Errorf("runtime limit %d, want it left at %d (%s)", runtimeLimit, untouched, got.Reason)
			case tc.want != 0 && (runtimeLimit != tc.want || got.Bytes != tc.want):
				t.Errorf("runtime limit %d, reported %d, want %d (%s)", runtimeLimit, got.Bytes, tc.want, got.Reason)
			}
			if got.Reason == "" {
				t.Error("no reason reported")
			}
		})
	}
}

func TestCgroupMemoryLimitFiles(t *testing.T) {
	const fallbacks = "/sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes"
	for _, tc := range []struct {
		name, cgroup, mountinfo, want string
	}{
		{
			name:      "cgroup v2, own namespace (a container)",
			cgroup:    "0::/\n",
			mountinfo: "1067 1066 0:27 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n",
			want:      "/sys/fs/cgroup/memory.max",
		},
		{
			name:   "cgroup v2, host namespace",
			cgroup: "0::/kubepods.slice/kubepods-burstable.slice/cri-containerd-0a1b.scope\n",
			mountinfo: "25 30 0:22 / /proc rw - proc proc rw\n" +
				"35 31 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			want: "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/cri-containerd-0a1b.scope/memory.max",
		},
		{
			name:   "cgroup v1, the container's cgroup mounted as the root",
			cgroup: "12:pids:/docker/0a1b\n4:memory:/docker/0a1b\n1:name=systemd:/docker/0a1b\n0::/system.slice/containerd.service\n",
			mountinfo: "1180 1179 0:104 /docker/0a1b /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory\n" +
				"1181 1179 0:105 /docker/0a1b /sys/fs/cgroup/pids ro,nosuid - cgroup cgroup rw,pids\n",
			want: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		},
		{
			name:      "cgroup v1, the whole hierarchy mounted",
			cgroup:    "4:memory:/process_api/2955\n3:cpuset:/\n",
			mountinfo: "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
			want:      "/sys/fs/cgroup/memory/process_api/2955/memory.limit_in_bytes",
		},
		{
			name:      "cgroup namespace with the process outside it",
			cgroup:    "0::/../other\n",
			mountinfo: "1067 1066 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup rw\n",
			want:      "/sys/fs/cgroup/memory.max",
		},
		{name: "nothing readable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := strings.TrimSpace(tc.want + " " + fallbacks)
			if got := strings.Join(cgroupMemoryLimitFiles(tc.cgroup, tc.mountinfo), " "); got != want {
				t.Errorf("files\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestMemoryLimitRatioFlag(t *testing.T) {
	for _, c := range []struct {
		value   string
		refused bool
	}{
		{"", false}, // the default
		{"0", false},
		{"0.5", false},
		{"1", false},
		{"-0.1", true},
		{"1.5", true},
		{"NaN", true},
	} {
		o := NewOptions(io.Discard, io.Discard)
		o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"}
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		for _, f := range o.Flags().FlagSets {
			fs.AddFlagSet(f)
		}
		var args []string
		if c.value != "" {
			args = []string{"--memory-limit-ratio=" + c.value}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if c.value == "" && o.MemoryLimitRatio != DefaultMemoryLimitRatio {
			t.Errorf("default ratio %g, want %g", o.MemoryLimitRatio, DefaultMemoryLimitRatio)
		}
		err := o.Validate(nil)
		refused := err != nil && strings.Contains(err.Error(), "--memory-limit-ratio")
		if refused != c.refused {
			t.Errorf("--memory-limit-ratio=%s: refused %v, want %v (%v)", c.value, refused, c.refused, err)
		}
	}
}
