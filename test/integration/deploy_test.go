package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// requireRefused fails the test unless the host refuses the rendered
// overlay in a server-side dry run, naming kind.
func requireRefused(t *testing.T, overlay string, r *rendered, kind string) {
	t.Helper()
	if _, err := dryRun(t, r); err == nil || !strings.Contains(err.Error(), kind) {
		t.Errorf("%s overlay without the CRD of its %s: %v, want it refused", overlay, kind, err)
	}
}

// installHostCRDs installs the CRDs of artifacts/host-crds/<dir> on the
// host and waits until crds are established.
func installHostCRDs(t *testing.T, dir string, crds ...string) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	s := framework.Current()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "apply", "--server-side", "-f", filepath.Join(root, "artifacts", "host-crds", dir)); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, crd := range crds {
		names = append(names, "crd/"+crd)
	}
	if err := s.WaitEstablished(ctx, time.Minute, names...); err != nil {
		t.Fatal(err)
	}
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

// TestDeployOverlays: the kustomize overlays of artifacts/deploy render
// with the stack's kubectl and hold what each platform needs to make the
// serving certificate and inject its CA, to reach etcd with client TLS,
// and to have Prometheus scrape tenant-apiserver; the host accepts every
// object in a server-side dry run. The dry runs move the namespaced
// objects to a namespace of their own, because the stack runs
// tenant-apiserver's Service and APIService its own way in tenant-system.
// Objects of CRDs the stack does not install are refused until their CRDs
// are: the ServiceMonitor of every overlay (prometheus-operator's, in
// artifacts/host-crds/monitoring) and the cert-manager objects of the
// kubernetes overlays (artifacts/host-crds/cert-manager), both at the
// versions pinned in hack/tools. The *-with-etcd overlays add the etcd
// component, whose StatefulSet's pod the host admits under the restricted
// Pod Security Standard.
func TestDeployOverlays(t *testing.T) {
	ctx := framework.Context(t, 4*time.Minute)
	s := framework.Current()
	const checkNS = "tenant-deploy-check"
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "create", "namespace", checkNS); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _, _ = s.Kubectl(context.Background(), stack.AdminUser, "delete", "namespace", checkNS, "--wait=false")
	}()

	openshift := renderOverlay(t, "openshift", "")
	secret := openshift.mountedSecret(t, "serving-cert")
	if got := openshift.find("Service", "tenant-apiserver").GetAnnotations()["service.beta.openshift.io/serving-cert-secret-name"]; got != secret {
		t.Errorf("openshift: the service CA would write the serving certificate to %q, the Deployment mounts %q", got, secret)
	}
	if got := openshift.find("APIService", "v1alpha1.tenant.io").GetAnnotations()["service.beta.openshift.io/inject-cabundle"]; got != "true" {
		t.Errorf("openshift: the APIService's CA is not injected (inject-cabundle %q)", got)
	}
	checkEtcdClient(t, openshift)
	checkAudit(t, openshift)
	checkMonitoring(t, openshift, "openshift-monitoring")
	if got := openshift.find("Namespace", "tenant-system").GetLabels()["openshift.io/cluster-monitoring"]; got != "true" {
		t.Errorf("openshift: the platform Prometheus does not scrape tenant-system (label openshift.io/cluster-monitoring %q)", got)
	}
	if got := openshift.serviceMonitorTLS(t)["caFile"]; got != "/etc/prometheus/configmaps/serving-certs-ca-bundle/service-ca.crt" {
		t.Errorf("openshift: the ServiceMonitor verifies with caFile %v, want the service CA bundle of the platform Prometheus", got)
	}

	openshiftMoved := renderOverlay(t, "openshift", checkNS)
	requireRefused(t, "openshift", openshiftMoved, "ServiceMonitor")
	installHostCRDs(t, "monitoring", "servicemonitors.monitoring.coreos.com")
	requireAccepted(t, "openshift", openshiftMoved)

	checkRestricted(t, openshift.find("Deployment", "tenant-apiserver"), checkNS)

	kube := renderOverlay(t, "kubernetes", "")
	cert := kube.find("Certificate", "tenant-apiserver-serving")
	if cert == nil {
		t.Fatal("kubernetes: no Certificate tenant-apiserver-serving")
	}
	serving := kube.mountedSecret(t, "serving-cert")
	if got, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName"); got != serving {
		t.Errorf("kubernetes: cert-manager would write the serving certificate to %q, the Deployment mounts %q", got, serving)
	}
	names, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if !slices.Contains(names, "tenant-apiserver.tenant-system.svc") {
		t.Errorf("kubernetes: the serving certificate's names %v lack the Service's", names)
	}
	if got := kube.find("APIService", "v1alpha1.tenant.io").GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "tenant-system/tenant-apiserver-serving" {
		t.Errorf("kubernetes: the APIService's CA comes from %q, want the serving Certificate", got)
	}
	checkEtcdClient(t, kube)
	checkAudit(t, kube)
	checkMonitoring(t, kube, "monitoring")
	ca, _, _ := unstructured.NestedStringMap(kube.serviceMonitorTLS(t), "ca", "secret")
	if ca["name"] != serving || ca["key"] != "ca.crt" {
		t.Errorf("kubernetes: the ServiceMonitor verifies with %v, want ca.crt of the serving certificate's Secret %s", ca, serving)
	}

	kubeMoved := renderOverlay(t, "kubernetes", checkNS)
	requireRefused(t, "kubernetes", kubeMoved, "Certificate")
	installHostCRDs(t, "cert-manager", "certificates.cert-manager.io", "issuers.cert-manager.io")
	requireAccepted(t, "kubernetes", kubeMoved)

	for _, overlay := range []string{"kubernetes-with-etcd", "openshift-with-etcd"} {
		r := renderOverlay(t, overlay, "")
		checkEtcdClient(t, r)
		checkAudit(t, r)
		checkEtcdComponent(t, r)
		requireAccepted(t, overlay, renderOverlay(t, overlay, checkNS))
		sts := r.find("StatefulSet", "etcd")
		runAs, _, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "template", "spec", "securityContext", "runAsUser")
		switch overlay {
		case "kubernetes-with-etcd":
			// etcd's image runs as root: the pod must name a user for
			// the kubelet to start it with runAsNonRoot.
			if runAs == nil {
				t.Errorf("%s: the etcd pod names no user, and etcd's image runs as root", overlay)
			}
			checkRestricted(t, sts, checkNS)
		case "openshift-with-etcd":
			if runAs != nil {
				t.Errorf("%s: the etcd pod runs as %v: restricted-v2 refuses users outside the namespace's range", overlay, runAs)
			}
		}
	}
}

// checkRestricted has the host admit, in a dry run, a pod made from the
// pod template of a workload (Deployment, StatefulSet) into namespace ns
// once ns enforces the restricted Pod Security Standard, and refuse the
// same pod without its pod-level securityContext (so the check can fail).
func checkRestricted(t *testing.T, workload *unstructured.Unstructured, ns string) {
	t.Helper()
	ctx := framework.Context(t, time.Minute)
	s := framework.Current()
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted", "--overwrite"); err != nil {
		t.Fatal(err)
	}
	// The pod runs as the namespace's default ServiceAccount: the
	// workload's own is not created by a dry run.
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "wait", "-n", ns, "--for=create", "serviceaccount/default", "--timeout=30s"); err != nil {
		t.Fatal(err)
	}
	spec, _, err := unstructured.NestedMap(workload.Object, "spec", "template", "spec")
	if err != nil || spec == nil {
		t.Fatalf("the pod template of %s %s: %v", workload.GetKind(), workload.GetName(), err)
	}
	delete(spec, "serviceAccountName")
	// A StatefulSet's pods get a volume for each of its claim templates,
	// named as the StatefulSet controller names the first pod's claims.
	claims, _, _ := unstructured.NestedSlice(workload.Object, "spec", "volumeClaimTemplates")
	for _, c := range claims {
		name, _, _ := unstructured.NestedString(c.(map[string]any), "metadata", "name")
		vols, _, _ := unstructured.NestedSlice(spec, "volumes")
		spec["volumes"] = append(vols, map[string]any{"name": name,
			"persistentVolumeClaim": map[string]any{"claimName": name + "-" + workload.GetName() + "-0"}})
	}
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
		t.Errorf("the pod of %s %s in a namespace enforcing restricted: %v\n%s", workload.GetKind(), workload.GetName(), err, stderr)
	}
	loose := runtime.DeepCopyJSON(spec)
	delete(loose, "securityContext")
	if _, _, err := s.Kubectl(ctx, stack.AdminUser, "create", "--dry-run=server", "-f", pod("loose", loose)); err == nil || !strings.Contains(err.Error(), "PodSecurity") {
		t.Errorf("the pod of %s %s without its securityContext: %v, want a PodSecurity refusal", workload.GetKind(), workload.GetName(), err)
	}
}
