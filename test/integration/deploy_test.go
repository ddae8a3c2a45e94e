package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"tenant.io/tenant-apiserver/pkg/stack"
	"tenant.io/tenant-apiserver/test/integration/framework"
)

// rendered is an overlay of artifacts/deploy as kustomize renders it.
type rendered struct {
	path    string
	objects []*unstructured.Unstructured
}

// find returns the rendered object of kind and name, or nil.
func (r *rendered) find(kind, name string) *unstructured.Unstructured {
	for _, o := range r.objects {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// renderOverlay runs the stack's `kubectl kustomize` on an overlay; with a
// namespace, on a kustomization of the test's that moves the overlay's
// objects to that namespace.
func renderOverlay(t *testing.T, overlay, namespace string) *rendered {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "artifacts", "deploy", "overlays", overlay)
	if namespace != "" {
		moved := t.TempDir()
		rel, err := filepath.Rel(moved, dir) // kustomize takes no absolute bases
		if err != nil {
			t.Fatal(err)
		}
		k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + namespace + "\nresources:\n- " + rel + "\n"
		if err := os.WriteFile(filepath.Join(moved, "kustomization.yaml"), []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
		dir = moved
	}
	out, _, err := framework.Current().Kubectl(ctx, stack.AdminUser, "kustomize", dir)
	if err != nil {
		t.Fatalf("rendering the %s overlay: %v", overlay, err)
	}
	r := &rendered{path: filepath.Join(t.TempDir(), overlay+".yaml")}
	if err := os.WriteFile(r.path, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(out)), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("the %s overlay's output: %v", overlay, err)
		}
		if len(u.Object) > 0 {
			r.objects = append(r.objects, u)
		}
	}
	return r
}

// dryRun applies a rendered overlay to the host (server-side apply, as
// `kubectl apply -k` would take over the objects the stack made) with
// --dry-run=server: the host validates and admits every object (schemas,
// CRDs, admission) and stores nothing. It returns kubectl's lines.
func dryRun(t *testing.T, r *rendered) ([]string, error) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	out, stderr, err := framework.Current().Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "--force-conflicts", "--field-manager=tenant-deploy-check",
		"--dry-run=server", "-f", r.path)
	if err != nil {
		err = fmt.Errorf("%w\n%s", err, stderr)
	}
	return strings.Split(strings.TrimSpace(out), "\n"), err
}

// requireAccepted fails the test unless the host accepts every object of
// the rendered overlay in a server-side dry run.
func requireAccepted(t *testing.T, overlay string, r *rendered) {
	t.Helper()
	lines, err := dryRun(t, r)
	if err != nil {
		t.Fatalf("%s overlay, server dry run: %v", overlay, err)
	}
	if len(lines) != len(r.objects) {
		t.Errorf("%s overlay: %d objects, kubectl reported %d:\n%s", overlay, len(r.objects), len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, "(server dry run)") {
			t.Errorf("%s overlay: %q", overlay, l)
		}
	}
}

// TestDeployOverlays: both kustomize overlays of artifacts/deploy render
// with the stack's kubectl and hold what each platform needs to make the
// serving certificate and inject its CA; the host accepts every object in
// a server-side dry run. The dry runs move the namespaced objects to a
// namespace of their own, because the stack runs tenant-apiserver's
// Service and APIService its own way in tenant-system. The kubernetes
// overlay's cert-manager objects are refused until cert-manager's CRDs
// (artifacts/host-crds/cert-manager, at the pinned version) are installed:
// the dry run checks them.
func TestDeployOverlays(t *testing.T) {
	ctx := framework.Context(t, 3*time.Minute)
	s := framework.Current()
	const checkNS = "tenant-deploy-check"
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "create", "namespace", checkNS); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _, _ = s.Kubectl(context.Background(), stack.AdminUser, "delete", "namespace", checkNS, "--wait=false")
	}()

	servingSecret := func(r *rendered) string {
		d := r.find("Deployment", "tenant-apiserver")
		if d == nil {
			t.Fatalf("%s: no Deployment tenant-apiserver", r.path)
		}
		vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
		for _, v := range vols {
			if name, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); name != "" {
				return name
			}
		}
		t.Fatalf("%s: the Deployment mounts no Secret", r.path)
		return ""
	}

	openshift := renderOverlay(t, "openshift", "")
	secret := servingSecret(openshift)
	if got := openshift.find("Service", "tenant-apiserver").GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]; got != secret {
		t.Errorf("openshift: the service CA would write the serving certificate to %q, the Deployment mounts %q", got, secret)
	}
	if got := openshift.find("APIService", "v1alpha1.tenant.io").GetAnnotations()["service.beta.openshift.io/inject-cabundle"]; got != "true" {
		t.Errorf("openshift: the APIService's CA is not injected (inject-cabundle %q)", got)
	}
	requireAccepted(t, "openshift", renderOverlay(t, "openshift", checkNS))

	checkRestricted(t, openshift.find("Deployment", "tenant-apiserver"), checkNS)

	kube := renderOverlay(t, "kubernetes", "")
	cert := kube.find("Certificate", "tenant-apiserver-serving")
	if cert == nil {
		t.Fatal("kubernetes: no Certificate tenant-apiserver-serving")
	}
	if got, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); got != servingSecret(kube) {
		t.Errorf("kubernetes: cert-manager would write the serving certificate to %q, the Deployment mounts %q", got, servingSecret(kube))
	}
	names, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if !strings.Contains(strings.Join(names, " "), "tenant-apiserver.tenant-system.svc") {
		t.Errorf("kubernetes: the serving certificate's names %v lack the Service's", names)
	}
	if got := kube.find("APIService", "v1alpha1.tenant.io").GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "tenant-system/tenant-apiserver-serving" {
		t.Errorf("kubernetes: the APIService's CA comes from %q, want the serving Certificate", got)
	}

	kubeMoved := renderOverlay(t, "kubernetes", checkNS)
	if _, err := dryRun(t, kubeMoved); err == nil || !strings.Contains(err.Error(), "Certificate") {
		t.Errorf("kubernetes overlay without cert-manager's CRDs: %v, want its Certificates refused", err)
	}
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "-f", filepath.Join(root, "artifacts", "host-crds", "cert-manager")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io"); err != nil {
		t.Fatal(err)
	}
	requireAccepted(t, "kubernetes", kubeMoved)
}

// checkRestricted has the host admit, in a dry run, a pod made from the
// Deployment's template into namespace ns once ns enforces the restricted
// Pod Security Standard, and refuse the same pod without its pod-level
// securityContext (so the check can fail).
func checkRestricted(t *testing.T, deployment *unstructured.Unstructured, ns string) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	s := framework.Current()
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted", "--overwrite"); err != nil {
		t.Fatal(err)
	}
	// The pod runs as the namespace's default ServiceAccount: the
	// Deployment's own is not created by a dry run.
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "wait", "-n", ns, "--for=create", "serviceaccount/default", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}
	spec, _, err := unstructured.NestedMap(deployment.Object, "spec", "template", "spec")
	if err != nil || spec == nil {
		t.Fatalf("the Deployment's pod template: %v", err)
	}
	delete(spec, "serviceAccountName")
	pod := func(name string, spec map[string]any) string {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
		b, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), name+".json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, stderr, err := s.Kubectl(ctx, stack.AdminUser, "create", "--dry-run=server", "-f", pod("restricted", spec)); err != nil {
		t.Errorf("the Deployment's pod in a namespace enforcing restricted: %v\n%s", err, stderr)
	}
	loose := runtime.DeepCopyJSON(spec)
	delete(loose, "securityContext")
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "create", "--dry-run=server", "-f", pod("loose", loose)); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("the pod without its securityContext: %v, want a PodSecurity refusal", err)
	}
}
