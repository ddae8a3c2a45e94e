package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readTar returns the headers and contents of a tar, by name.
func readTar(t *testing.T, r io.Reader) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	headers, files := map[string]*tar.Header{}, map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return headers, files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name], files[h.Name] = h, data
	}
}

func TestImageArchive(t *testing.T) {
	dir := t.TempDir()
	binary := filepath.Join(dir, "tenant-apiserver")
	payload := []byte("\x7fELF not really a binary")
	if err := os.WriteFile(binary, payload, 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := newImage(binary, "arm64", "registry.example/tenant-apiserver:v1")
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "image.tar")
	if err := img.writeArchive(archive); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	_, files := readTar(t, f)

	blob := func(d string) []byte {
		t.Helper()
		data, ok := files["blobs/sha256/"+strings.TrimPrefix(d, "sha256:")]
		if !ok {
			t.Fatalf("the archive has no blob %s", d)
		}
		if digest(data) != d {
			t.Fatalf("blob %s has digest %s", d, digest(data))
		}
		return data
	}

	// The OCI layout: index → manifest → config and layer, each by digest.
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %q", files["oci-layout"])
	}
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %s (%v)", files["index.json"], err)
	}
	if got := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != "v1" {
		t.Errorf("the index names the image %q, want v1", got)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v, %d layers", err, len(manifest.Layers))
	}
	var cfg imageConfig
	if err := json.Unmarshal(blob(manifest.Config.Digest), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/tenant-apiserver" || cfg.Architecture != "arm64" || cfg.OS != "linux" {
		t.Errorf("config: user %q, entrypoint %v, platform %s/%s; want 65532:65532, [/tenant-apiserver], linux/arm64",
			cfg.Config.User, cfg.Config.Entrypoint, cfg.OS, cfg.Architecture)
	}

	// The layer: the binary, non-root's users, /tmp; and the config's
	// diff ID is the digest of the uncompressed layer.
	gz := blob(manifest.Layers[0].Digest)
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	layerTar, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != digest(layerTar) {
		t.Errorf("diff IDs %v, want [%s]", cfg.RootFS.DiffIDs, digest(layerTar))
	}
	headers, contents := readTar(t, bytes.NewReader(layerTar))
	if h := headers["tenant-apiserver"]; h == nil || !bytes.Equal(contents["tenant-apiserver"], payload) || h.Mode&0o111 == 0 {
		t.Errorf("the layer lacks the executable binary at /tenant-apiserver")
	}
	if !strings.Contains(string(contents["etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user: %q", contents["etc/passwd"])
	}
	if h := headers["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp is missing or not world-writable with the sticky bit")
	}
	if h := headers["home/nonroot/"]; h == nil || h.Uid != 65532 {
		t.Errorf("nonroot's home is missing or not nonroot's")
	}
	for name := range headers {
		if strings.HasPrefix(name, "bin/") || name == "bin/sh" {
			t.Errorf("the image holds %s: it has no shell", name)
		}
	}

	// docker load's manifest names the same config and layer.
	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &docker); err != nil || len(docker) != 1 {
		t.Fatalf("manifest.json: %s (%v)", files["manifest.json"], err)
	}
	if docker[0].RepoTags[0] != "registry.example/tenant-apiserver:v1" || docker[0].Config != "blobs/sha256/"+strings.TrimPrefix(manifest.Config.Digest, "sha256:") {
		t.Errorf("manifest.json: %+v", docker[0])
	}

	// One binary, one digest.
	again, err := newImage(binary, "arm64", "registry.example/tenant-apiserver:v1")
	if err != nil {
		t.Fatal(err)
	}
	if again.manifestDigest != img.manifestDigest {
		t.Errorf("two builds of one binary: manifests %s and %s", img.manifestDigest, again.manifestDigest)
	}
}
