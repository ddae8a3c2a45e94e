// Command image builds the tenant-apiserver (or, with -cmd tenant-dns, the
// tenant-dns) container image without a container runtime: a static
// (CGO_ENABLED=0) build of cmd/<cmd>
// in one layer made from scratch, with what the Containerfile's
// distroless/static:nonroot base gives it (users root, nobody and nonroot
// 65532 in /etc/passwd and /etc/group, the build machine's CA
// certificates, /tmp and nonroot's home), run as 65532:65532 with the
// binary as entrypoint and no shell. It writes one archive that is both an
// OCI image layout (podman load, skopeo copy oci-archive:...) and a
// `docker load` archive.
//
//	go run ./hack/image [-o _output/image] [-tag tenant-apiserver:dev] [-arch amd64] [-cmd tenant-apiserver]
//
// make image runs it when neither podman nor docker is installed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"time"
)

func main() {
	out := flag.String("o", "_output/image", "output directory")
	tag := flag.String("tag", "tenant-apiserver:dev", "repository:tag the archive names the image by")
	flag.StringVar(&command, "cmd", command, "the command of cmd/ to build: tenant-apiserver or tenant-dns")
	arch := flag.String("arch", runtime.GOARCH, "GOARCH of the binary and the image")
	flag.Parse()
	if command != "tenant-apiserver" && command != "tenant-dns" {
		fmt.Fprintf(os.Stderr, "image: -cmd must be tenant-apiserver or tenant-dns, not %q\n", command)
		os.Exit(2)
	}
	binaryPath = "/" + command

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, ".", *out, *tag, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run builds the image of the module at root into the directory out.
func run(ctx context.Context, root, out, tag, arch string) error {
	start := time.Now()
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	binary := filepath.Join(out, command)
	if err := buildBinary(ctx, root, arch, binary); err != nil {
		return err
	}
	img, err := newImage(binary, arch, tag)
	if err != nil {
		return err
	}
	archive := filepath.Join(out, command+".tar")
	if err := img.writeArchive(archive); err != nil {
		return err
	}
	fi, err := os.Stat(archive)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %s, %s linux/%s, %.1f MiB (layer %.1f MiB compressed), in %s\n",
		archive, tag, img.manifestDigest, arch, float64(fi.Size())/(1<<20), float64(len(img.layer))/(1<<20),
		time.Since(start).Round(100*time.Millisecond))
	return nil
}
