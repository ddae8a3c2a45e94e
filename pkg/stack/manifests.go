package stack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TenantAPIServiceName is the APIService that registers tenant.io/v1alpha1.
const TenantAPIServiceName = "v1alpha1.tenant.io"

// AdminAPIServiceName is the APIService that registers admin.tenant.io/v1alpha1,
// the provider's views, served by the same tenant-apiserver.
const AdminAPIServiceName = "v1alpha1.admin.tenant.io"

// apiServices are the groups tenant-apiserver serves, as registered with
// the aggregator: the group tenants use first, so that kubectl resolves
// "networks" to tenant.io.
var apiServices = []struct {
	name, group   string
	groupPriority int64
}{
	{TenantAPIServiceName, "tenant.io", 1000},
	{AdminAPIServiceName, "admin.tenant.io", 900},
}

// fieldManager is the server-side apply field manager of the framework.
const fieldManager = "tenant-stack"

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// manifest is one YAML document of a manifest file.
type manifest struct {
	source string
	raw    []byte
	meta   struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
}

func (m *manifest) String() string {
	return fmt.Sprintf("%s %s/%s (%s)", m.meta.Kind, m.meta.Metadata.Namespace, m.meta.Metadata.Name, m.source)
}

// yamlFiles lists the *.yaml and *.yml files of dir but kustomization.yaml,
// sorted; a missing directory has none.
func yamlFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		// kustomization.yaml lists the files for kustomize; it is not an object.
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) && e.Name() != "kustomization.yaml" {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// readManifests splits files into their non-empty YAML documents.
func readManifests(files []string) ([]*manifest, error) {
	var out []*manifest
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", file, err)
			}
			m := &manifest{source: file, raw: doc}
			if err := utilyaml.Unmarshal(doc, &m.meta); err != nil {
				return nil, fmt.Errorf("parsing %s: %w", file, err)
			}
			if m.meta.Kind == "" {
				continue // empty document or comments only
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// ownedByFramework reports whether a deploy manifest describes something the
// framework runs or registers itself: the tenant-apiserver Deployment (it runs
// as a local process instead), the APIService of the tenant.io group and the
// tenant-apiserver Service (re-created to reach that process, with the
// stack's own CA bundle).
func ownedByFramework(m *manifest) bool {
	switch {
	case m.meta.Kind == "Deployment":
		return true
	case m.meta.Kind == "APIService" && strings.HasSuffix(m.meta.Metadata.Name, ".tenant.io"):
		return true
	case m.meta.Kind == "Service" && m.meta.Metadata.Name == TenantAPIServerServiceName &&
		(m.meta.Metadata.Namespace == TenantAPIServerNamespace || m.meta.Metadata.Namespace == ""):
		return true
	}
	return false
}

// kindOrder sorts manifests so that what others depend on is applied first.
func kindOrder(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	case "ServiceAccount", "ClusterRole", "Role":
		return 2
	case "ClusterRoleBinding", "RoleBinding":
		return 3
	default:
		return 4
	}
}

// writeDeployBundle writes the deploy manifests the framework applies into
// one file, dependencies first. It returns "" when there is nothing to apply.
func writeDeployBundle(deployDir, out string) (string, []string, error) {
	files, err := yamlFiles(deployDir)
	if err != nil {
		return "", nil, err
	}
	all, err := readManifests(files)
	if err != nil {
		return "", nil, err
	}
	var keep []*manifest
	var skipped []string
	for _, m := range all {
		if ownedByFramework(m) {
			skipped = append(skipped, m.String())
			continue
		}
		keep = append(keep, m)
	}
	if len(keep) == 0 {
		return "", skipped, nil
	}
	sort.SliceStable(keep, func(i, j int) bool { return kindOrder(keep[i].meta.Kind) < kindOrder(keep[j].meta.Kind) })
	var buf bytes.Buffer
	for _, m := range keep {
		fmt.Fprintf(&buf, "---\n# from %s\n%s\n", m.source, bytes.TrimSpace(m.raw))
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return "", nil, err
	}
	return out, skipped, nil
}

// applyNamespace creates a namespace unless it exists.
func applyNamespace(ctx context.Context, client kubernetes.Interface, name string) error {
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// registerTenantAPIServer points the host at a tenant-apiserver on
// localhost:port: an ExternalName Service (the aggregator dials
// "<externalName>:<port>" and checks the certificate against
// "<service>.<namespace>.svc") and the APIService with the stack's CA.
func registerTenantAPIServer(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, port int, caPEM []byte) error {
	if err := applyNamespace(ctx, client, TenantAPIServerNamespace); err != nil {
		return fmt.Errorf("creating namespace %s: %w", TenantAPIServerNamespace, err)
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: TenantAPIServerServiceName, Namespace: TenantAPIServerNamespace},
		Spec: corev1.ServiceSpec{
			Type:         corev1.ServiceTypeExternalName,
			ExternalName: "localhost",
			Ports: []corev1.ServicePort{{
				Name:       "https",
				Protocol:   corev1.ProtocolTCP,
				Port:       int32(port),
				TargetPort: intstr.FromInt32(int32(port)),
			}},
		},
	}
	services := client.CoreV1().Services(TenantAPIServerNamespace)
	existing, err := services.Get(ctx, svc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := services.Create(ctx, svc, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("creating Service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	case err != nil:
		return err
	default:
		// Replace whatever is there: a ClusterIP Service cannot be turned
		// into an ExternalName one field by field.
		existing.Spec = svc.Spec
		if _, err := services.Update(ctx, existing, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
			return fmt.Errorf("updating Service %s/%s: %w", svc.Namespace, svc.Name, err)
		}
	}

	for _, as := range apiServices {
		apiService := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]interface{}{"name": as.name},
			"spec": map[string]interface{}{
				"group":                 as.group,
				"version":               "v1alpha1",
				"groupPriorityMinimum":  as.groupPriority,
				"versionPriority":       int64(15),
				"insecureSkipTLSVerify": false,
				"caBundle":              base64.StdEncoding.EncodeToString(caPEM), // []byte in the typed API
				"service": map[string]interface{}{
					"namespace": TenantAPIServerNamespace,
					"name":      TenantAPIServerServiceName,
					"port":      int64(port),
				},
			},
		}}
		if _, err := dyn.Resource(apiServicesGVR).Apply(ctx, as.name, apiService, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying APIService %s: %w", as.name, err)
		}
	}
	return nil
}

// apiServiceAvailable returns nil when the APIService has Available=True, else
// an error with its condition.
func apiServiceAvailable(ctx context.Context, dyn dynamic.Interface, name string) error {
	obj, err := dyn.Resource(apiServicesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		cond, _ := c.(map[string]interface{})
		if cond["type"] != "Available" {
			continue
		}
		if cond["status"] == "True" {
			return nil
		}
		return fmt.Errorf("APIService %s Available=%v: %v: %v", name, cond["status"], cond["reason"], cond["message"])
	}
	return fmt.Errorf("APIService %s has no Available condition yet", name)
}
