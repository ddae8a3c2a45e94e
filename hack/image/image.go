package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// command is the command of cmd/ the image runs (-cmd): tenant-apiserver,
// or tenant-dns. binaryPath is where its binary is, the entrypoint.
var (
	command    = "tenant-apiserver"
	binaryPath = "/" + command
)

// The image's layout, the same as the Containerfile's.
const (
	// nonroot is the user and group the image runs as, distroless's nonroot.
	nonroot = 65532
	// caFile is where Go's crypto/x509 looks first on Linux, and where
	// distroless keeps its CA bundle.
	caFile = "/etc/ssl/certs/ca-certificates.crt"
	// workDir is nonroot's home, distroless's working directory.
	workDir = "/home/nonroot"
)

// The users and groups of distroless/static.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// OCI media types.
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// epoch is every file's and the image's time, so that one binary gives one
// image digest.
var epoch = time.Unix(0, 0).UTC()

// buildBinary builds cmd/<command> of the module at dir, statically
// linked, for linux/arch, into out.
func buildBinary(ctx context.Context, dir, arch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/"+command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", command, err)
	}
	return nil
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// imageConfig is the part of an OCI image configuration the image sets.
type imageConfig struct {
	Created      time.Time `json:"created"`
	Architecture string    `json:"architecture"`
	OS           string    `json:"os"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd,omitempty"`
		Env        []string          `json:"Env"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels,omitempty"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	} `json:"history"`
}

// image is a built image: its blobs and the names of its digests.
type image struct {
	tag            string
	layer          []byte // gzipped tar
	config         []byte
	manifest       []byte
	manifestDigest string
}

// newImage makes the image of the binary at binaryFile.
func newImage(binaryFile, arch, tag string) (*image, error) {
	layerTar, err := layer(binaryFile)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(layerTar); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}

	var cfg imageConfig
	cfg.Created, cfg.Architecture, cfg.OS = epoch, arch, "linux"
	cfg.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
	cfg.Config.Entrypoint = []string{binaryPath}
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "SSL_CERT_FILE=" + caFile}
	cfg.Config.WorkingDir = workDir
	cfg.Config.Labels = map[string]string{"org.opencontainers.image.title": command}
	cfg.RootFS.Type = "layers"
	cfg.RootFS.DiffIDs = []string{digest(layerTar)}
	cfg.History = append(cfg.History, struct {
		Created   time.Time `json:"created"`
		CreatedBy string    `json:"created_by"`
	}{epoch, "hack/image: " + command + ", users, CA certificates, /tmp"})
	config, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaTypeManifest,
		"config":        descriptor{MediaType: mediaTypeConfig, Digest: digest(config), Size: int64(len(config))},
		"layers":        []descriptor{{MediaType: mediaTypeLayer, Digest: digest(gz.Bytes()), Size: int64(gz.Len())}},
	})
	if err != nil {
		return nil, err
	}
	return &image{tag: tag, layer: gz.Bytes(), config: config, manifest: manifest, manifestDigest: digest(manifest)}, nil
}

// layer returns the image's one layer, uncompressed: the binary, /etc's
// users, groups and CA certificates (when the build machine has them),
// /tmp and nonroot's home.
func layer(binaryFile string) ([]byte, error) {
	bin, err := os.ReadFile(binaryFile)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: epoch, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error {
			ca, err := os.ReadFile(caFile)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the image then trusts no public CA; neither command needs one
			}
			if err != nil {
				return err
			}
			for _, d := range []string{"etc/ssl", "etc/ssl/certs"} {
				if err := dir(d, 0o755, 0); err != nil {
					return err
				}
			}
			return file(strings.TrimPrefix(caFile, "/"), 0o644, ca)
		},
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(workDir, "/"), 0o700, nonroot) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return file(strings.TrimPrefix(binaryPath, "/"), 0o755, bin) },
		tw.Close,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// writeArchive writes the image to path as a tar of an OCI image layout
// (oci-layout, index.json, blobs/sha256/...) that also holds the
// manifest.json `docker load` reads.
func (img *image) writeArchive(path string) error {
	repo, version, ok := strings.Cut(img.tag, ":")
	if !ok {
		version = "latest"
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaTypeIndex,
		"manifests": []descriptor{{
			MediaType: mediaTypeManifest, Digest: img.manifestDigest, Size: int64(len(img.manifest)),
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": version,
				"io.containerd.image.name":          repo + ":" + version,
			},
		}},
	})
	if err != nil {
		return err
	}
	blob := func(data []byte) string { return "blobs/sha256/" + strings.TrimPrefix(digest(data), "sha256:") }
	docker, err := json.Marshal([]map[string]any{{
		"Config":   blob(img.config),
		"RepoTags": []string{repo + ":" + version},
		"Layers":   []string{blob(img.layer)},
	}})
	if err != nil {
		return err
	}

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{"manifest.json", docker},
		{blob(img.manifest), img.manifest},
		{blob(img.config), img.config},
		{blob(img.layer), img.layer},
	} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// digest returns the OCI digest of data.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}
